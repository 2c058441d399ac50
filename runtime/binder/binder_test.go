package binder

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/runtime/externaluri"
)

var target = Target{
	Namespace: "analytics", Service: "wc-ui-svc", AppID: "spark-0123", PortName: "spark-ui",
	PodName: "wc-driver", PodUID: "7c1f0e2a-0000-4000-8000-000000000001",
	Selector: DefaultSelector("spark-0123"), Role: "wc-ui-svc-binder",
}

func TestBindPatch(t *testing.T) {
	got := string(target.BindPatch(4041))
	want := `[{"op":"test","path":"/metadata/labels/spark-app-selector","value":"spark-0123"},` +
		`{"op":"test","path":"/metadata/labels/app.kubernetes.io~1managed-by","value":"sparkui"},` +
		`{"op":"test","path":"/spec/ports/0/name","value":"spark-ui"},` +
		`{"op":"replace","path":"/spec/ports/0/targetPort","value":4041},` +
		`{"op":"add","path":"/spec/selector","value":{"spark-app-selector":"spark-0123","spark-role":"driver"}},` +
		`{"op":"add","path":"/metadata/ownerReferences","value":[{"apiVersion":"v1","kind":"Pod","name":"wc-driver","uid":"7c1f0e2a-0000-4000-8000-000000000001"}]}]`
	if got != want {
		t.Errorf("bind patch\n got %s\nwant %s", got, want)
	}
	if strings.Contains(got, "blockOwnerDeletion") || strings.Contains(got, "resourceVersion") {
		t.Error("bind patch sets blockOwnerDeletion or a resourceVersion")
	}
}

func TestWithdrawPatch(t *testing.T) {
	got := string(target.WithdrawPatch(KeepURI))
	want := `[{"op":"test","path":"/metadata/labels/spark-app-selector","value":"spark-0123"},` +
		`{"op":"test","path":"/metadata/labels/app.kubernetes.io~1managed-by","value":"sparkui"},` +
		`{"op":"test","path":"/spec/ports/0/name","value":"spark-ui"},` +
		`{"op":"test","path":"/metadata/ownerReferences/0/uid","value":"7c1f0e2a-0000-4000-8000-000000000001"},` +
		`{"op":"add","path":"/spec/selector","value":{"sparkui.dev/withdrawn":"7c1f0e2a-0000-4000-8000-000000000001"}}]`
	if got != want {
		t.Errorf("withdraw patch\n got %s\nwant %s", got, want)
	}
}

// TestWithdrawPatchNoPod: without the Pod's identity there is no binding to hold: no guard.
func TestWithdrawPatchNoPod(t *testing.T) {
	tg := target
	tg.PodUID, tg.PodName = "", ""
	if got := string(tg.WithdrawPatch(KeepURI)); strings.Contains(got, "ownerReferences") {
		t.Errorf("withdraw patch without a Pod tests the owner: %s", got)
	}
}

func TestWithdrawPatchURI(t *testing.T) {
	base := `[{"op":"test","path":"/metadata/labels/spark-app-selector","value":"spark-0123"},` +
		`{"op":"test","path":"/metadata/labels/app.kubernetes.io~1managed-by","value":"sparkui"},` +
		`{"op":"test","path":"/spec/ports/0/name","value":"spark-ui"},` +
		`{"op":"test","path":"/metadata/ownerReferences/0/uid","value":"7c1f0e2a-0000-4000-8000-000000000001"},` +
		`{"op":"add","path":"/spec/selector","value":{"sparkui.dev/withdrawn":"7c1f0e2a-0000-4000-8000-000000000001"}},`
	if got, want := string(target.WithdrawPatch(RemoveURI)), base+
		`{"op":"remove","path":"/metadata/annotations/sparkui.dev~1resolved-external-uri","value":null}]`; got != want {
		t.Errorf("remove\n got %s\nwant %s", got, want)
	}
	if got, want := string(target.WithdrawPatch(ClearURI)), base+
		`{"op":"add","path":"/metadata/annotations/sparkui.dev~1resolved-external-uri","value":""},`+
		`{"op":"remove","path":"/metadata/annotations/sparkui.dev~1resolved-external-uri","value":null}]`; got != want {
		t.Errorf("clear\n got %s\nwant %s", got, want)
	}
	view := func(ann map[string]string) *externaluri.Service {
		v := &externaluri.Service{}
		v.Metadata.Annotations = ann
		return v
	}
	for _, c := range []struct {
		view *externaluri.Service
		want URIOps
	}{
		{nil, ClearURI},
		{view(nil), KeepURI},
		{view(map[string]string{"x": "y"}), KeepURI},
		{view(map[string]string{"sparkui.dev/resolved-external-uri": "http://h:1"}), RemoveURI},
		{view(map[string]string{"sparkui.dev/provide-external-uri": "true"}), ClearURI},
	} {
		if got := WithdrawURIOps(c.view); got != c.want {
			t.Errorf("WithdrawURIOps(%+v) = %d, want %d", c.view, got, c.want)
		}
	}
}

func TestPublishPatch(t *testing.T) {
	base := `[{"op":"test","path":"/metadata/labels/spark-app-selector","value":"spark-0123"},` +
		`{"op":"test","path":"/metadata/labels/app.kubernetes.io~1managed-by","value":"sparkui"},` +
		`{"op":"test","path":"/spec/ports/0/name","value":"spark-ui"},` +
		`{"op":"test","path":"/metadata/ownerReferences/0/uid","value":"7c1f0e2a-0000-4000-8000-000000000001"},` +
		`{"op":"test","path":"/spec/selector","value":{"spark-app-selector":"spark-0123","spark-role":"driver"}},`
	if got, want := string(target.PublishPatch("http://192.0.2.1:30001", true)), base+
		`{"op":"add","path":"/metadata/annotations/sparkui.dev~1resolved-external-uri","value":"http://192.0.2.1:30001"}]`; got != want {
		t.Errorf("with annotations\n got %s\nwant %s", got, want)
	}
	if got, want := string(target.PublishPatch("http://192.0.2.1:30001", false)), base+
		`{"op":"add","path":"/metadata/annotations","value":{"sparkui.dev/resolved-external-uri":"http://192.0.2.1:30001"}}]`; got != want {
		t.Errorf("without annotations\n got %s\nwant %s", got, want)
	}
}

// shared is the target of one run of a ScheduledSparkApplication "nightly": the Service is
// guarded by sparkui.dev/application, outlives the run (no ownerReference), and the run's
// driver Pod is selected by its random spark-app-selector.
var shared = Target{
	Namespace: "analytics", Service: "nightly-sparkui-ui-svc", AppID: "spark-5e1f", PortName: "spark-ui",
	GuardKey: "sparkui.dev/application", GuardValue: "nightly", NoOwner: true,
	PodName: "nightly-1764460800000000000-driver", PodUID: "7c1f0e2a-0000-4000-8000-000000000002",
	Selector: DefaultSelector("spark-5e1f"), Role: "nightly-sparkui-ui-svc-binder",
}

const sharedGuards = `[{"op":"test","path":"/metadata/labels/sparkui.dev~1application","value":"nightly"},` +
	`{"op":"test","path":"/metadata/labels/app.kubernetes.io~1managed-by","value":"sparkui"},` +
	`{"op":"test","path":"/spec/ports/0/name","value":"spark-ui"},`

// TestSharedBindPatch: the guard label replaces spark-app-selector, and the bind labels the
// Service with the Pod's UID instead of making the Pod its owner.
func TestSharedBindPatch(t *testing.T) {
	got := string(shared.BindPatch(4041))
	want := sharedGuards +
		`{"op":"replace","path":"/spec/ports/0/targetPort","value":4041},` +
		`{"op":"add","path":"/spec/selector","value":{"spark-app-selector":"spark-5e1f","spark-role":"driver"}},` +
		`{"op":"add","path":"/metadata/labels/sparkui.dev~1bound-pod","value":"7c1f0e2a-0000-4000-8000-000000000002"}]`
	if got != want {
		t.Errorf("bind patch\n got %s\nwant %s", got, want)
	}
}

// TestSharedWithdrawPatch: held means "the bound-pod label is this Pod's UID".
func TestSharedWithdrawPatch(t *testing.T) {
	held := `{"op":"test","path":"/metadata/labels/sparkui.dev~1bound-pod","value":"7c1f0e2a-0000-4000-8000-000000000002"},` +
		`{"op":"add","path":"/spec/selector","value":{"sparkui.dev/withdrawn":"7c1f0e2a-0000-4000-8000-000000000002"}}`
	if got, want := string(shared.WithdrawPatch(KeepURI)), sharedGuards+held+`]`; got != want {
		t.Errorf("withdraw patch\n got %s\nwant %s", got, want)
	}
	if got, want := string(shared.WithdrawPatch(RemoveURI)), sharedGuards+held+
		`,{"op":"remove","path":"/metadata/annotations/sparkui.dev~1resolved-external-uri","value":null}]`; got != want {
		t.Errorf("withdraw patch (remove URI)\n got %s\nwant %s", got, want)
	}
}

func TestSharedPublishPatch(t *testing.T) {
	want := sharedGuards +
		`{"op":"test","path":"/metadata/labels/sparkui.dev~1bound-pod","value":"7c1f0e2a-0000-4000-8000-000000000002"},` +
		`{"op":"test","path":"/spec/selector","value":{"spark-app-selector":"spark-5e1f","spark-role":"driver"}},` +
		`{"op":"add","path":"/metadata/annotations/sparkui.dev~1resolved-external-uri","value":"http://192.0.2.1:30001"}]`
	if got := string(shared.PublishPatch("http://192.0.2.1:30001", true)); got != want {
		t.Errorf("publish patch\n got %s\nwant %s", got, want)
	}
}

// TestGuardLabelOnly: --guard-label without --owner-reference=false keeps the ownerReference
// and its guard; only the label tested changes.
func TestGuardLabelOnly(t *testing.T) {
	tg := target
	tg.GuardKey, tg.GuardValue = "sparkui.dev/application", "wordcount"
	got := string(tg.WithdrawPatch(KeepURI))
	want := `[{"op":"test","path":"/metadata/labels/sparkui.dev~1application","value":"wordcount"},` +
		`{"op":"test","path":"/metadata/labels/app.kubernetes.io~1managed-by","value":"sparkui"},` +
		`{"op":"test","path":"/spec/ports/0/name","value":"spark-ui"},` +
		`{"op":"test","path":"/metadata/ownerReferences/0/uid","value":"7c1f0e2a-0000-4000-8000-000000000001"},` +
		`{"op":"add","path":"/spec/selector","value":{"sparkui.dev/withdrawn":"7c1f0e2a-0000-4000-8000-000000000001"}}]`
	if got != want {
		t.Errorf("withdraw patch\n got %s\nwant %s", got, want)
	}
}

func TestEscape(t *testing.T) {
	if got := escape("a/b~c"); got != "a~1b~0c" {
		t.Error(got)
	}
	var ops []op
	if err := json.Unmarshal(target.BindPatch(1), &ops); err != nil || len(ops) != 6 {
		t.Fatal(ops, err)
	}
}

func client(t *testing.T) *Client {
	t.Helper()
	c, err := NewClient(&rest.Config{Host: "https://127.0.0.1:1"}, target)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClassify(t *testing.T) {
	c := client(t)
	gr := schema.GroupResource{Resource: "services"}
	forbidden := apierrors.NewForbidden(gr, "wc-ui-svc", errors.New(`User "system:serviceaccount:analytics:spark" cannot patch resource "services" in API group "" in the namespace "analytics"`))
	for _, tc := range []struct {
		name string
		err  error
		kind Kind
		want []string
	}{
		{"unreachable", errors.New("dial tcp 10.0.0.1:443: connect: connection refused"), Transient, []string{"unreachable", "connection refused"}},
		{"401", apierrors.NewUnauthorized("Unauthorized"), Unauthorized, []string{"401", "token"}},
		{"403", forbidden, Forbidden, []string{"403", "ServiceAccount analytics/spark", "patch", "services", `"wc-ui-svc"`, "namespace analytics", "Role analytics/wc-ui-svc-binder", "[get patch]", "resourceNames [wc-ui-svc]"}},
		{"404", apierrors.NewNotFound(gr, "wc-ui-svc"), NotFound, []string{"404", "Service analytics/wc-ui-svc"}},
		{"422 with causes", apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "wc-ui-svc", nil), Invalid, []string{"422"}},
		{"500", apierrors.NewInternalError(errors.New("etcd")), Transient, []string{"500"}},
		{"429", apierrors.NewTooManyRequests("slow down", 1), Transient, []string{"429"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "422 with causes" {
				tc.err = &apierrors.StatusError{ErrStatus: metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid,
					Message: "Service is invalid", Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Field: "spec.ports[0].targetPort"}}}}}
			}
			err := c.classify(context.Background(), "bind", tc.err)
			var f *Failure
			if !errors.As(err, &f) {
				t.Fatalf("not a Failure: %v", err)
			}
			if f.Kind != tc.kind {
				t.Errorf("kind %s, want %s", f.Kind, tc.kind)
			}
			for _, w := range tc.want {
				if !strings.Contains(f.Message, w) {
					t.Errorf("message does not contain %q: %s", w, f.Message)
				}
			}
			if !errors.Is(err, tc.err) {
				t.Error("the API error is not wrapped")
			}
			if f.Fatal() != (tc.kind != Transient) {
				t.Errorf("Fatal() = %t", f.Fatal())
			}
		})
	}
	if c.classify(context.Background(), "bind", nil) != nil {
		t.Error("nil error classified")
	}
}

func TestIsTestFailure(t *testing.T) {
	// What kube-apiserver 1.37 answers to a failed `test` operation (seen in the control
	// plane tests): a bare 422.
	if !isTestFailure(metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid, Details: &metav1.StatusDetails{}}) {
		t.Error("bare 422 not a test failure")
	}
	if isTestFailure(metav1.Status{Code: 422, Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Field: "spec"}}}}) {
		t.Error("validation error taken for a test failure")
	}
}

func TestKindString(t *testing.T) {
	if NotOurs.String() != "not-ours" || Transient.String() != "transient" {
		t.Error(NotOurs.String(), Transient.String())
	}
}

func TestHandoffPatch(t *testing.T) {
	h := Handoff{URI: "https://shs.example.com/history/spark-0123/", Port: 8080}
	base := `[{"op":"test","path":"/metadata/labels/spark-app-selector","value":"spark-0123"},` +
		`{"op":"test","path":"/metadata/labels/app.kubernetes.io~1managed-by","value":"sparkui"},` +
		`{"op":"test","path":"/spec/ports/0/name","value":"spark-ui"},` +
		`{"op":"test","path":"/metadata/ownerReferences/0/uid","value":"7c1f0e2a-0000-4000-8000-000000000001"},` +
		`{"op":"add","path":"/spec/selector","value":{"sparkui.dev/history-redirector":"true"}},` +
		`{"op":"replace","path":"/spec/ports/0/targetPort","value":8080},`
	member := `{"op":"add","path":"/metadata/annotations/sparkui.dev~1history-uri","value":"https://shs.example.com/history/spark-0123/"}`
	for _, c := range []struct {
		uri  URIOps
		have bool
		want string
	}{
		{KeepURI, true, base + member + `]`},
		{RemoveURI, true, base + member + `,{"op":"remove","path":"/metadata/annotations/sparkui.dev~1resolved-external-uri","value":null}]`},
		{ClearURI, true, base + member + `,{"op":"add","path":"/metadata/annotations/sparkui.dev~1resolved-external-uri","value":""},` +
			`{"op":"remove","path":"/metadata/annotations/sparkui.dev~1resolved-external-uri","value":null}]`},
		// No annotations: the whole map, only while it is still missing.
		{ClearURI, false, base + `{"op":"test","path":"/metadata/annotations","value":null},` +
			`{"op":"add","path":"/metadata/annotations","value":{"sparkui.dev/history-uri":"https://shs.example.com/history/spark-0123/"}}]`},
	} {
		if got := string(target.HandoffPatch(h, c.uri, c.have)); got != c.want {
			t.Errorf("uri %d have %v\n got %s\nwant %s", c.uri, c.have, got, c.want)
		}
	}
	// A Service shared by runs: the holder guard is the bound-pod label.
	tg := target
	tg.NoOwner, tg.GuardKey, tg.GuardValue = true, "sparkui.dev/application", "wc"
	got := string(tg.HandoffPatch(h, KeepURI, true))
	if !strings.Contains(got, `{"op":"test","path":"/metadata/labels/sparkui.dev~1bound-pod","value":"7c1f0e2a-0000-4000-8000-000000000001"}`) ||
		!strings.Contains(got, `{"op":"test","path":"/metadata/labels/sparkui.dev~1application","value":"wc"}`) {
		t.Errorf("shared Service's hand-off lacks its guards: %s", got)
	}
}
