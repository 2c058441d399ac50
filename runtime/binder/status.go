package binder

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sparkui/sparkui/internal/names"
)

// State is what the status annotations say about the UI Service (names.AnnotationUI*): the
// state, when it began, the driver Pod it is about, the port (bound only) and the reason
// (absent when bound). It is written in the same patch as the change it describes, so the
// annotations never say "bound" of a Service that is not.
type State struct {
	State  string
	Since  time.Time
	Pod    string
	Port   int
	Reason string
}

// values are the annotations s sets; every other status annotation is removed.
func (s State) values() map[string]string {
	m := map[string]string{
		names.AnnotationUIState: s.State,
		names.AnnotationUISince: s.Since.UTC().Format(time.RFC3339),
	}
	if s.Pod != "" {
		m[names.AnnotationUIPod] = s.Pod
	}
	if s.State == names.UIStateBound && s.Port > 0 {
		m[names.AnnotationUIPort] = strconv.Itoa(s.Port)
	}
	if r := OneLine(s.Reason); r != "" && s.State != names.UIStateBound {
		m[names.AnnotationUIReason] = r
	}
	return m
}

var statusKeys = []string{names.AnnotationUIState, names.AnnotationUISince, names.AnnotationUIPod, names.AnnotationUIPort, names.AnnotationUIReason}

// ops writes s into metadata.annotations, which must exist: `add` each value, and for an
// annotation s leaves out `add` then `remove` (JSON Patch `remove` fails on a missing member,
// and the whole patch with it; `add` creates or replaces, so the pair succeeds either way).
func (s State) ops() []op {
	if s.State == "" {
		return nil
	}
	vals := s.values()
	var out []op
	for _, k := range statusKeys {
		p := "/metadata/annotations/" + escape(k)
		if v, ok := vals[k]; ok {
			out = append(out, op{Op: "add", Path: p, Value: v})
		} else {
			out = append(out, op{Op: "add", Path: p, Value: ""}, op{Op: "remove", Path: p})
		}
	}
	return out
}

// newAnnotations creates metadata.annotations holding s's values and extra, guarded by a
// `test` that the map is still missing (`test` with value null succeeds on a missing member
// only), so annotations written meanwhile are never replaced.
func (s State) newAnnotations(extra map[string]string) []op {
	m := map[string]string{}
	if s.State != "" {
		m = s.values()
	}
	for k, v := range extra {
		m[k] = v
	}
	return []op{
		{Op: "test", Path: "/metadata/annotations", Value: nil},
		{Op: "add", Path: "/metadata/annotations", Value: m},
	}
}

// OneLine makes r a ui-reason: one line (line breaks and tabs as spaces), at most
// names.UIReasonMax characters (cut with an ellipsis).
func OneLine(r string) string {
	r = strings.Join(strings.Fields(r), " ")
	if utf8.RuneCountInString(r) <= names.UIReasonMax {
		return r
	}
	rs := []rune(r)
	return string(rs[:names.UIReasonMax-1]) + "…"
}
