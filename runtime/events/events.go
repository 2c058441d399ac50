// Package events records the runtime's Kubernetes Events (events.k8s.io/v1): reported by
// sparkui-runtime, regarding the driver Pod, related to the UI Service (docs/events.md).
//
// Recording goes through client-go's events library (k8s.io/client-go/tools/events,
// v0.37.2), never through a recorder of our own. What that library does, read in its source:
//
//   - recorderImpl.eventf (event_recorder.go) builds the Event and hands it to the broadcaster
//     from a goroutine of its own: the caller never waits for the API server, so a bind or a
//     withdrawal is never delayed by recording it.
//   - The broadcaster queues at most 1000 Events and drops beyond (watch.NewBroadcaster with
//     maxQueuedEvents, DropIfChannelFull; event_broadcaster.go newBroadcaster).
//   - Deduplication (event_broadcaster.go recordToSink, getKey): Events with the same type,
//     action, reason, reporting controller and instance, regarding and related are one
//     "isomorphic" Event. The second makes it an EventSeries (count 2, one PATCH); later ones
//     only raise the count in memory, written by finishSeries once the series has been quiet
//     for 6 minutes and by refreshExistingEventSeries every 30 minutes (and once when recording
//     starts, which may patch a series just begun a second time). The note is not part
//     of the key: a repeat keeps the first note and counts.
//   - Retries (attemptRecording, recordEvent): an error the API server answered (a
//     *errors.StatusError: 403 Forbidden, 422 Invalid, ...) is never retried ("Server rejected
//     event (will not retry!)"); only transport errors are, at most 12 tries 10 s apart
//     (jittered), and not past the context given to StartRecordingToSinkWithContext.
//
// So without the RBAC for Events (403) each distinct Event costs one refused POST, its first
// repeat one refused PATCH (rarely two), a series that goes on one more every 30 minutes, and
// nothing more: no storm, and nothing waits on it.
package events

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	typedeventsv1 "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/rest"
	kevents "k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
)

// ReportingController is the Events' reportingController (design.md: reported by
// sparkui-runtime).
const ReportingController = "sparkui-runtime"

// Reasons of the runtime's Events (docs/events.md).
const (
	ReasonBound     = "Bound"
	ReasonWithdrawn = "Withdrawn"
	ReasonHandedOff = "HandedOff"
	// ReasonConfigError: the runtime cannot run with its settings and waits for SIGTERM.
	ReasonConfigError = "ConfigError"
	// The UI is not proven, and why (agent.onVerdict's verdicts, runtime/sparkapi).
	ReasonUIAuthRequired  = "UIAuthRequired"  // a filter refuses the probes, no or a wrong credential
	ReasonUITLSUnverified = "UITLSUnverified" // TLS the runtime was not configured for or cannot pass
	ReasonUIAPIFailing    = "UIAPIFailing"    // Spark's REST API keeps failing
	ReasonUIUnproven      = "UIUnproven"      // hostNetwork: a live UI whose identity cannot be proven
	ReasonUINotFound      = "UINotFound"      // no listening UI on the ports it may bind, after a while
	// ReasonGuardRefused: the API server refused the bind's guarded patch: the Service is not
	// this application's.
	ReasonGuardRefused = "GuardRefused"
	// ReasonServiceWriteFailed: another refusal a person must act on (RBAC on the Service, a
	// missing Service, an invalid request).
	ReasonServiceWriteFailed = "ServiceWriteFailed"
	// ReasonWithdrawalNotAcknowledged: the withdrawal was not acknowledged in time.
	ReasonWithdrawalNotAcknowledged = "WithdrawalNotAcknowledged"
)

// noteLimit is the API server's limit on an Event's note (1 kB; events.k8s.io/v1 Event.note).
const noteLimit = 1024

// truncateNote cuts note to noteLimit bytes at a rune boundary: a rune cut in half would go out
// as U+FFFD (3 bytes in JSON) and could push the note over the limit, which the API server
// refuses (a note carries what the UI answered, any text).
func truncateNote(note string) string {
	if len(note) <= noteLimit {
		return note
	}
	cut := noteLimit - len("...")
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + "..."
}

// Identity is what the Events are about: the driver Pod (from POD_NAME, POD_NAMESPACE,
// POD_UID) and its UI Service.
type Identity struct {
	Namespace, PodName, PodUID, Service string
}

// Recorder records the runtime's Events. A nil *Recorder records nothing (--events=false).
type Recorder struct {
	rec       kevents.EventRecorder
	b         kevents.EventBroadcaster
	sink      *sink
	pod       *corev1.Pod
	svc       *corev1.Service
	start     time.Time
	cancel    context.CancelFunc
	emitted   atomic.Int64 // Events handed to the library
	delivered atomic.Int64 // Events its broadcaster distributed
	stopOnce  sync.Once
}

// New starts a recorder writing to the API server of cfg with a client of its own (its own
// rate limiter and timeout: recording never takes a bind's turn). start is when the runtime
// started (Bound says the seconds since).
func New(cfg *rest.Config, id Identity, start time.Time, log *slog.Logger) (*Recorder, error) {
	c := rest.CopyConfig(cfg)
	if c.Timeout == 0 || c.Timeout > 5*time.Second {
		c.Timeout = 5 * time.Second
	}
	client, err := typedeventsv1.NewForConfig(c)
	if err != nil {
		return nil, err
	}
	return newRecorder(&kevents.EventSinkImpl{Interface: client}, id, start, log), nil
}

func newRecorder(inner kevents.EventSink, id Identity, start time.Time, log *slog.Logger) *Recorder {
	s := &sink{inner: inner, instance: id.PodName, log: log}
	r := &Recorder{
		sink:  s,
		b:     kevents.NewBroadcaster(s),
		start: start,
		pod: &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Namespace: id.Namespace, Name: id.PodName, UID: types.UID(id.PodUID)}},
		svc: &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Namespace: id.Namespace, Name: id.Service}},
	}
	// The library logs each refused Event with its whole body through klog; the sink says it
	// once, in the runtime's own log, with what to do.
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
	r.cancel = cancel
	_ = r.b.StartRecordingToSinkWithContext(ctx) // its only error is from a stopped broadcaster
	_, _ = r.b.StartEventWatcher(func(runtime.Object) { r.delivered.Add(1) })
	r.rec = r.b.NewRecorder(scheme(), ReportingController).WithLogger(logr.Discard())
	return r
}

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	return s
}

func (r *Recorder) record(typ, reason, action, note string) {
	if r == nil {
		return
	}
	note = truncateNote(note)
	var related runtime.Object
	if r.svc.Name != "" { // a configuration error may come before the Service is known
		related = r.svc
	}
	r.emitted.Add(1)
	r.rec.Eventf(r.pod, related, typ, reason, action, "%s", note)
}

// Normal records a Normal Event.
func (r *Recorder) Normal(reason, action, note string) {
	r.record(corev1.EventTypeNormal, reason, action, note)
}

// Warning records a Warning Event.
func (r *Recorder) Warning(reason, action, note string) {
	r.record(corev1.EventTypeWarning, reason, action, note)
}

// Since is the time since the runtime started, in whole seconds, for Bound's note.
func (r *Recorder) Since() int {
	if r == nil {
		return 0
	}
	return int(time.Since(r.start).Seconds())
}

// Shutdown hands what was recorded to the API server within timeout at most, then stops: the
// runtime is ending (SIGTERM), and its grace period is the driver's.
func (r *Recorder) Shutdown(timeout time.Duration) {
	if r == nil {
		return
	}
	r.stopOnce.Do(func() {
		deadline := time.Now().Add(timeout)
		// eventf hands each Event over from a goroutine: wait until the broadcaster has them.
		for r.delivered.Load() < r.emitted.Load() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		r.b.Shutdown()
		// recordToSink writes from a goroutine per Event: wait until none is in flight and
		// none started for a moment, then cancel what is left (retries of an unreachable
		// API server included).
		r.sink.waitQuiet(deadline)
		r.cancel()
	})
}

// sink is the library's EventSink for events.k8s.io/v1 with three additions: the reporting
// instance is the Pod's name (the library takes the host name, which under hostNetwork is
// the node's), every request is counted, and a refusal is logged once.
type sink struct {
	inner    kevents.EventSink
	instance string
	log      *slog.Logger

	mu       sync.Mutex
	inflight int
	last     time.Time
	said     map[int32]bool
}

func (s *sink) begin(e *eventsv1.Event) {
	if s.instance != "" {
		e.ReportingInstance = s.instance
	}
	s.mu.Lock()
	s.inflight++
	s.last = time.Now()
	s.mu.Unlock()
}

func (s *sink) end(err error) {
	s.mu.Lock()
	s.inflight--
	s.last = time.Now()
	code := int32(0)
	if status, ok := err.(apierrors.APIStatus); ok {
		code = status.Status().Code
	}
	first := err != nil && !s.said[code]
	if first {
		if s.said == nil {
			s.said = map[int32]bool{}
		}
		s.said[code] = true
	}
	s.mu.Unlock()
	switch {
	case !first:
	case apierrors.IsForbidden(err):
		s.log.Warn("Events not recorded: the API server refuses them (403); binding and withdrawing go on without them. "+
			"Grant create and patch on events.k8s.io events (the Role sparkui-fn writes does), or set runtime.events: false",
			"err", err.Error())
	default:
		s.log.Warn("an Event was not recorded; binding and withdrawing go on without it", "err", err.Error())
	}
}

func (s *sink) Create(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	s.begin(e)
	out, err := s.inner.Create(ctx, e)
	s.end(err)
	return out, err
}

func (s *sink) Update(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	s.begin(e)
	out, err := s.inner.Update(ctx, e)
	s.end(err)
	return out, err
}

func (s *sink) Patch(ctx context.Context, e *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	s.begin(e)
	out, err := s.inner.Patch(ctx, e, data)
	s.end(err)
	return out, err
}

// waitQuiet waits until no request is in flight and none started or ended for quiet, or
// until deadline.
func (s *sink) waitQuiet(deadline time.Time) {
	const quiet = 100 * time.Millisecond
	// The library's goroutines may not have started the last request yet: count from now.
	s.mu.Lock()
	s.last = time.Now()
	s.mu.Unlock()
	for time.Now().Before(deadline) {
		s.mu.Lock()
		done := s.inflight == 0 && time.Since(s.last) >= quiet
		s.mu.Unlock()
		if done {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
