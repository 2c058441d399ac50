package fakespark

import "time"

// Phase is one state of a starting UI, held for For.
type Phase struct {
	State State
	For   time.Duration
}

// SparkStartup is the sequence a real driver's UI goes through, with each window's length:
// SparkContext binds the UI (WebUI.bind: the socket listens, no handler: bare), SparkUI's
// init handler serves the starting-up page until the application is registered, then
// SparkContext calls attachAllHandlers, which removes the init handler (404) and adds the
// UI's contexts in SparkUI.initialize's order: the root redirect before the REST API (302 to
// /jobs/ on /api/v1), then the REST API (ready; the environment stored a little later).
// conformance: startup-sequence
func SparkStartup(bare, startingUp, attaching, attachingAPI, envPending time.Duration) []Phase {
	return []Phase{
		{Bare, bare}, {StartingUp, startingUp}, {Attaching, attaching},
		{AttachingAPI, attachingAPI}, {EnvPending, envPending}, {Ready, 0},
	}
}

func (s *Server) runStartup(phases []Phase) {
	for _, p := range phases {
		s.Set(p.State)
		if p.For <= 0 {
			continue
		}
		t := time.NewTimer(p.For)
		select {
		case <-s.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}
