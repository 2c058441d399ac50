package events

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// forbiddingSink answers every request as an API server without the events rule does (403),
// and keeps what it was sent.
type forbiddingSink struct {
	mu    sync.Mutex
	calls []string
	sent  []*eventsv1.Event
}

func (f *forbiddingSink) answer(verb string, e *eventsv1.Event) (*eventsv1.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, verb+" "+e.Reason)
	f.sent = append(f.sent, e.DeepCopy())
	return nil, apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "",
		errors.New(`User "system:serviceaccount:analytics:spark" cannot create resource "events"`))
}

func (f *forbiddingSink) Create(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return f.answer("create", e)
}

func (f *forbiddingSink) Update(_ context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	return f.answer("update", e)
}

func (f *forbiddingSink) Patch(_ context.Context, e *eventsv1.Event, _ []byte) (*eventsv1.Event, error) {
	return f.answer("patch", e)
}

// TestForbiddenNoStorm: refused (403) Events cost one create per distinct Event and one patch
// for the first repeat of one (client-go's series), whatever the number of repeats; the
// runtime logs the refusal once; recording returns at once; the reporting instance is the
// Pod's name and a long note is cut to the API server's limit.
func TestForbiddenNoStorm(t *testing.T) {
	var log bytes.Buffer
	sink := &forbiddingSink{}
	r := newRecorder(sink, Identity{Namespace: "analytics", PodName: "wordcount-driver", PodUID: "u-1", Service: "wordcount-ui-svc"},
		time.Now(), slog.New(slog.NewTextHandler(&log, nil)))
	began := time.Now()
	for range 20 {
		r.Warning(ReasonUINotFound, "Probe", "no Spark UI listening")
	}
	r.Normal(ReasonBound, "Bind", strings.Repeat("x", 3000))
	if took := time.Since(began); took > 100*time.Millisecond {
		t.Errorf("recording 21 Events took %s: it must not wait for the API server", took)
	}
	r.Shutdown(5 * time.Second)

	sink.mu.Lock()
	defer sink.mu.Unlock()
	got := map[string]int{}
	for _, c := range sink.calls {
		got[c]++
	}
	// The series may be patched once more: the library's refreshExistingEventSeries runs once
	// when recording starts (wait.UntilWithContext calls it at once, then every 30 minutes),
	// and may find the series already there (event_broadcaster.go).
	if len(got) != 3 || got["create UINotFound"] != 1 || got["patch UINotFound"] < 1 || got["patch UINotFound"] > 2 || got["create Bound"] != 1 {
		t.Errorf("requests %v, want one create UINotFound, one (at most two) patch UINotFound, one create Bound", got)
	}
	for _, e := range sink.sent {
		if e.ReportingInstance != "wordcount-driver" || e.ReportingController != ReportingController {
			t.Errorf("%s reported by %s/%s", e.Reason, e.ReportingController, e.ReportingInstance)
		}
		if len(e.Note) > noteLimit {
			t.Errorf("%s note of %d bytes, over the API server's %d", e.Reason, len(e.Note), noteLimit)
		}
	}
	if n := strings.Count(log.String(), "Events not recorded: the API server refuses them (403)"); n != 1 {
		t.Errorf("the 403 logged %d times, want once:\n%s", n, log.String())
	}
}

// TestNilRecorder: --events=false is a nil *Recorder, and every method is a no-op on it.
func TestNilRecorder(t *testing.T) {
	var r *Recorder
	r.Normal(ReasonBound, "Bind", "x")
	r.Warning(ReasonConfigError, "Configure", "x")
	r.Shutdown(time.Second)
	if r.Since() != 0 {
		t.Error("Since of a nil recorder")
	}
}

// TestTruncateNote: a note over the API server's limit is cut to it at a rune boundary, so the
// Event stays valid UTF-8 within 1 kB whatever the UI answered.
func TestTruncateNote(t *testing.T) {
	for _, note := range []string{strings.Repeat("x", 3000), strings.Repeat("é", 700), "a" + strings.Repeat("€", 400), "short"} {
		got := truncateNote(note)
		if len(got) > noteLimit || !utf8.ValidString(got) {
			t.Errorf("truncateNote(%d bytes) = %d bytes, valid UTF-8 %v", len(note), len(got), utf8.ValidString(got))
		}
		if len(note) <= noteLimit && got != note {
			t.Errorf("a note within the limit changed: %q", got)
		}
	}
}
