// Package uistate reads what sparkui and its runtime left on a live cluster: the UI Services
// (found by sparkui's labels), the state each one is in, its driver Pod, its carrier and its
// link. It is the table behind `kubectl sparkui list`, `open` and `why`; it only reads.
package uistate

import (
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkui/sparkui/internal/names"
)

// The status annotations the runtime keeps on the UI Service (internal/names/status.go,
// docs/service-status.md). They are written with the driver's own ServiceAccount token, so
// they are the application's claims: the Service's spec is what routes traffic, and State
// comes from it alone.
const (
	AnnotationUIState  = names.AnnotationUIState
	AnnotationUISince  = names.AnnotationUISince
	AnnotationUIPod    = names.AnnotationUIPod
	AnnotationUIPort   = names.AnnotationUIPort
	AnnotationUIReason = names.AnnotationUIReason
)

// State is where a UI Service routes, read from its spec.
type State string

const (
	// Waiting: no selector yet (the function writes none; the runtime's first bind sets it).
	Waiting State = names.UIStateWaiting
	// Bound: a selector naming the application's Pod, the UI port's targetPort the UI's port.
	Bound State = names.UIStateBound
	// Withdrawn: the selector {sparkui.dev/withdrawn: <Pod UID>} that matches nothing.
	Withdrawn State = names.UIStateWithdrawn
	// HandedOff: the History Server redirector's selector.
	HandedOff State = names.UIStateHandedOff
)

// SpecState derives the state from svc's spec the way the runtime writes it
// (runtime/binder patch.go BindPatch, WithdrawPatch, HandoffPatch), and for a bound or
// handed-off Service the first port's targetPort. Nothing else is trusted.
func SpecState(svc *corev1.Service) (State, string) {
	sel := svc.Spec.Selector
	port := ""
	if len(svc.Spec.Ports) > 0 {
		port = svc.Spec.Ports[0].TargetPort.String()
	}
	switch {
	case len(sel) == 0:
		return Waiting, ""
	case sel[names.WithdrawnSelectorKey] != "":
		return Withdrawn, ""
	case len(sel) == 1 && sel[names.LabelHistoryRedirector] == names.HistoryRedirectorValue:
		return HandedOff, port
	}
	return Bound, port
}

// Claims are the status annotations as the runtime wrote them (empty when absent: an older
// runtime, or one whose status writes are not there yet).
type Claims struct {
	State  string
	Since  time.Time
	Pod    string
	Port   string
	Reason string
}

// ReadClaims reads svc's status annotations; a since that is not RFC 3339 is left zero and
// reported in the returned problem.
func ReadClaims(svc *corev1.Service) (Claims, string) {
	a := svc.Annotations
	c := Claims{State: a[AnnotationUIState], Pod: a[AnnotationUIPod], Port: a[AnnotationUIPort], Reason: a[AnnotationUIReason]}
	if s := a[AnnotationUISince]; s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return c, AnnotationUISince + " " + strconv.Quote(s) + " is not RFC 3339"
		}
		c.Since = t
	}
	return c, ""
}

// Disagreement says where the claims contradict the spec ("" when they agree or are absent).
// A waiting claim on a withdrawn spec agrees (NextWaiting).
func Disagreement(st State, port string, c Claims) string {
	if c.State != "" && c.State != string(st) && !NextWaiting(st, c) {
		return AnnotationUIState + " says " + c.State + ", the spec says " + string(st)
	}
	if st == Bound && c.Port != "" && port != "" && c.Port != port {
		return AnnotationUIPort + " says " + c.Port + ", the spec's targetPort is " + port
	}
	return ""
}

// NextWaiting: the spec is an earlier driver Pod's withdrawal and the claims say waiting: the
// application's next runtime waits to bind the Service. The runtime writes waiting only where
// nothing is routed, and a withdrawn Service is one (runtime/binder WaitingPatch).
func NextWaiting(st State, c Claims) bool {
	return st == Withdrawn && c.State == names.UIStateWaiting
}
