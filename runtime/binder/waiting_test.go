package binder

import (
	"testing"
	"time"
)

// TestWaitingPatch: the waiting state goes only where nothing is routed: no selector, or the
// withdrawn key of some Pod proven present by a `move` onto itself; the usual guards first.
func TestWaitingPatch(t *testing.T) {
	st := State{State: "waiting", Since: time.Date(2026, 12, 5, 18, 31, 16, 0, time.UTC), Pod: "wc-driver", Reason: "port 4040: TLS"}
	guards := `[{"op":"test","path":"/metadata/labels/spark-app-selector","value":"spark-0123"},` +
		`{"op":"test","path":"/metadata/labels/app.kubernetes.io~1managed-by","value":"sparkui"},` +
		`{"op":"test","path":"/spec/ports/0/name","value":"spark-ui"},`
	status := `{"op":"add","path":"/metadata/annotations/sparkui.dev~1ui-state","value":"waiting"},` +
		`{"op":"add","path":"/metadata/annotations/sparkui.dev~1ui-since","value":"2026-12-05T18:31:16Z"},` +
		`{"op":"add","path":"/metadata/annotations/sparkui.dev~1ui-pod","value":"wc-driver"},` +
		`{"op":"add","path":"/metadata/annotations/sparkui.dev~1ui-port","value":""},{"op":"remove","path":"/metadata/annotations/sparkui.dev~1ui-port","value":null},` +
		`{"op":"add","path":"/metadata/annotations/sparkui.dev~1ui-reason","value":"port 4040: TLS"}]`
	for _, tc := range []struct {
		r    Routing
		want string
	}{
		{Unrouted, guards + `{"op":"test","path":"/spec/selector","value":null},` + status},
		{WithdrawnRouting, guards + `{"op":"move","from":"/spec/selector/sparkui.dev~1withdrawn","path":"/spec/selector/sparkui.dev~1withdrawn","value":null},` + status},
	} {
		if got := string(target.WaitingPatch(tc.r, st, true)); got != tc.want {
			t.Errorf("routing %d:\n got %s\nwant %s", tc.r, got, tc.want)
		}
	}
}
