// Package control is the runtime's unix socket: the driver container's preStop hook
// (`sparkui-runtime withdraw`) asks the runtime to withdraw the UI Service and waits for the
// API server's acknowledgement, within a bound.
//
// The protocol is one line each way: the client sends "withdraw <timeout>\n" (a Go duration),
// the server answers "ok\n" once the withdrawal is acknowledged, or "error <reason>\n".
package control

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// WithdrawFunc withdraws and returns once the API server acknowledged it, or ctx is done.
type WithdrawFunc func(ctx context.Context) error

// Server answers withdrawal requests on a unix socket.
type Server struct {
	ln       net.Listener
	withdraw WithdrawFunc
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	closed   bool
}

// maxWait bounds a request's wait whatever the client asks.
const maxWait = 5 * time.Minute

// Listen creates the socket at path (replacing a stale one left by a previous run of the
// container) with mode 0666: the driver container runs as another user (Spark's 185).
func Listen(path string, withdraw WithdrawFunc) (*Server, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("removing stale socket: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o666); err != nil {
		_ = ln.Close()
		return nil, err
	}
	s := &Server{ln: ln, withdraw: withdraw, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

func (s *Server) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
	}()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReaderSize(c, 256).ReadString('\n')
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	cmd, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	if cmd != "withdraw" {
		_, _ = fmt.Fprintf(c, "error unknown request %q\n", cmd)
		return
	}
	wait := maxWait
	if d, err := time.ParseDuration(arg); err == nil && d > 0 && d < maxWait {
		wait = d
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	// A client that hangs up stops the wait (not the withdrawal).
	go func() {
		var b [1]byte
		_, _ = c.Read(b[:])
		cancel()
	}()
	if err := s.withdraw(ctx); err != nil {
		_, _ = fmt.Fprintf(c, "error %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	_, _ = fmt.Fprint(c, "ok\n")
}

// Close stops listening, removes the socket and ends open requests.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

// ErrUnreachable is returned by Withdraw when no runtime listens on the socket.
var ErrUnreachable = errors.New("runtime unreachable")

// Withdraw asks the runtime listening at path to withdraw and waits for its answer, at most
// timeout in all.
func Withdraw(path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	c, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	defer c.Close()
	_ = c.SetDeadline(deadline)
	// Leave the server a little less than our own bound, so it answers before we give up.
	serverWait := timeout - timeout/10
	if _, err := fmt.Fprintf(c, "withdraw %s\n", serverWait); err != nil {
		return fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	line, err := bufio.NewReaderSize(c, 4096).ReadString('\n')
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("no acknowledgement within %s", timeout)
		}
		return fmt.Errorf("reading the runtime's answer: %w", err)
	}
	line = strings.TrimSpace(line)
	if line == "ok" {
		return nil
	}
	return errors.New(strings.TrimPrefix(line, "error "))
}
