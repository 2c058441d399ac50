package fakespark

import "time"

// Pause is a stop-the-world garbage collection of d in the driver JVM: the kernel still
// accepts connections (the listen backlog), but no Jetty thread runs, so every request
// received before the pause ends is answered only when it ends (or never, when the client
// gives up first). Spark has no code for this, the JVM does; G1 or Parallel GC full pauses of
// several seconds on a large driver heap are longer than the runtime's probe timeout.
// conformance: gc-pause
func (s *Server) Pause(d time.Duration) {
	s.pausedUntil.Store(time.Now().Add(d).UnixNano())
}

// paused holds a request until the pause ends; false when the client went away first.
func (s *Server) paused(done <-chan struct{}) bool {
	wait := time.Until(time.Unix(0, s.pausedUntil.Load()))
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

// SetHang exhausts (true) or frees (false) the UI's thread pool: while exhausted, connections
// are accepted and requests never answered (Options.Hang).
func (s *Server) SetHang(h bool) { s.hang.Store(h) }
