package redirect

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Limiter caps the connections a server holds at once, so that its memory has a bound
// whatever clients do: beyond the cap, new connections wait in the kernel's accept backlog
// (which costs this process nothing) until a slot frees. A connection that has not yet sent
// a whole request (net/http's StateNew, and StateIdle, which also covers a keep-alive
// connection reading its next request's header) is what a slow or idle client holds; when
// every slot is taken, the one that has waited longest is closed to make room — at once for
// an idle one, after minWait for a new one (an honest request arrives in one packet) — so
// neither idle nor slowly-sent connections can keep requests out for long. A redirect
// request's handler does not block, so busy connections end by themselves.
//
// golang.org/x/net/netutil.LimitListener caps the same way but cannot tell a waiting
// connection from a busy one: connections that never finish a header would keep every
// request waiting for ReadHeaderTimeout, idle ones for IdleTimeout.
type Limiter struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	close sync.Once

	mu      sync.Mutex
	waiting map[net.Conn]waiting // the connections without a request in progress
}

type waiting struct {
	since time.Time
	idle  bool // after a request (StateIdle), not new
}

// minWait is how long a new connection keeps its slot under pressure before its request
// has arrived whole.
const minWait = time.Second

// NewLimiter serves at most n connections of l at once. Its ConnState must be the server's
// http.Server.ConnState.
func NewLimiter(l net.Listener, n int) *Limiter {
	return &Limiter{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{}), waiting: map[net.Conn]waiting{}}
}

// Accept waits for a free slot (making one from the longest-waiting connection when it may)
// and then for a connection.
func (l *Limiter) Accept() (net.Conn, error) {
	for {
		select {
		case l.slots <- struct{}{}:
		default:
			if l.closeLongestWaiting() {
				continue
			}
			t := time.NewTimer(minWait / 4)
			select {
			case l.slots <- struct{}{}:
				t.Stop()
			case <-t.C:
				continue
			case <-l.done:
				t.Stop()
				return nil, net.ErrClosed
			}
		}
		break
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	lc := &limitedConn{Conn: c}
	lc.release = sync.OnceFunc(func() {
		l.forget(lc)
		<-l.slots
	})
	return lc, nil
}

// Close stops accepting, also a caller waiting for a slot.
func (l *Limiter) Close() error {
	l.close.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// ConnState follows which connections wait for a request.
func (l *Limiter) ConnState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateNew, http.StateIdle:
		l.waiting[c] = waiting{since: time.Now(), idle: s == http.StateIdle}
	default:
		delete(l.waiting, c)
	}
}

func (l *Limiter) forget(c net.Conn) {
	l.mu.Lock()
	delete(l.waiting, c)
	l.mu.Unlock()
}

// closeLongestWaiting closes the connection that has waited longest for its request, if any
// may be closed; closing frees its slot.
func (l *Limiter) closeLongestWaiting() bool {
	now := time.Now()
	l.mu.Lock()
	var victim net.Conn
	var since time.Time
	for c, w := range l.waiting {
		if !w.idle && now.Sub(w.since) < minWait {
			continue
		}
		if victim == nil || w.since.Before(since) {
			victim, since = c, w.since
		}
	}
	delete(l.waiting, victim)
	l.mu.Unlock()
	if victim == nil {
		return false
	}
	_ = victim.Close() // the server's read fails and it lets the connection go
	return true
}

type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
