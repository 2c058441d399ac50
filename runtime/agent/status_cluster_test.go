package agent_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
)

// TestStatusAnnotations: the status annotations across bound → withdrawn (UI lost) → bound →
// withdrawn (SIGTERM), each written in the bind's or withdrawal's own patch, on a Service
// created without metadata.annotations (not by sparkui-fn): the first bind's patch for a
// Service with annotations is refused and the one creating the map follows (two requests);
// every later write is one request, and no GET.
func TestStatusAnnotations(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{noAnn: true})
	if ann := a.service_(t).Annotations; len(ann) != 0 {
		t.Fatalf("the Service starts with annotations %v", ann)
	}
	var timeline []string
	record := func(step string) {
		ann := a.service_(t).Annotations
		var kv []string
		for _, k := range []string{names.AnnotationUIState, names.AnnotationUIPod, names.AnnotationUIPort, names.AnnotationUIReason, names.AnnotationUISince} {
			if v, ok := ann[k]; ok {
				kv = append(kv, strings.TrimPrefix(k, names.AnnotationPrefix)+"="+v)
			}
		}
		timeline = append(timeline, fmt.Sprintf("%-22s %s", step, strings.Join(kv, " ")))
	}
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r := start(t, a, a.config(t))
	r.waitBound(t, ui.Port)
	a.checkBound(t, ui.Port)
	record("bound")
	a.waitAudit(t, map[string]int{"patch": 2, "patch 422": 1, "patch 200": 1, "get": 0})

	ui.Close()
	r.waitWithdrawn(t)
	a.checkWithdrawn(t)
	if got := a.service_(t).Annotations[names.AnnotationUIReason]; got != "UI lost" {
		t.Errorf("ui-reason %q after the UI went, want \"UI lost\"", got)
	}
	record("withdrawn (UI lost)")

	ui2 := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r.waitBound(t, ui2.Port)
	a.checkBound(t, ui2.Port)
	record("bound again")

	if err := r.stop(t); err != nil {
		t.Fatalf("Run after SIGTERM: %v", err)
	}
	a.checkWithdrawn(t)
	if got := a.service_(t).Annotations[names.AnnotationUIReason]; got != "SIGTERM" {
		t.Errorf("ui-reason %q after SIGTERM, want SIGTERM", got)
	}
	record("withdrawn (SIGTERM)")
	if ann := a.service_(t).Annotations; len(ann) != 4 {
		t.Errorf("annotations %v: want the four status annotations of a withdrawal and nothing else", ann)
	}
	a.waitAudit(t, map[string]int{"patch": 5, "patch 422": 1, "patch 200": 4, "get": 0})
	t.Logf("timeline:\n%s", strings.Join(timeline, "\n"))
}
