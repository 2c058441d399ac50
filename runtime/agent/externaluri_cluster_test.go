package agent_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/agent"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

const hostIP = "192.0.2.10" // the driver Pod's status.hostIP (newApp)

// uriConfig is the runtime's configuration with --external-uri=mode and $HOST_IP.
func uriConfig(t testing.TB, a *app, mode string) agent.Config {
	cfg := a.config(t)
	cfg.ExternalURI = mode
	cfg.Getenv = func(k string) string {
		if k == sidecar.EnvHostIP {
			return hostIP
		}
		return ""
	}
	cfg.URIPoll = wait.Backoff{Duration: 50 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 1 << 30, Cap: 400 * time.Millisecond}
	return cfg
}

// resolved is the Service's resolved-external-uri annotation as the API server has it.
func (a *app) resolved(t testing.TB) (string, bool) {
	t.Helper()
	v, ok := a.service_(t).Annotations[names.AnnotationResolvedExternalURI]
	return v, ok
}

func (r *running) waitURI(t testing.TB, want string) {
	t.Helper()
	r.waitStatus(t, 20*time.Second, "external URI "+want, func(s agent.Status) bool { return s.Bound && s.URI == want })
}

// TestExternalURINodePort: after binding, the runtime writes http[s]://$HOST_IP:<nodePort>
// (the nodePort read from the bind response: no GET); the withdrawal removes it in the same
// patch. 3 PATCHes: bind, publish, withdraw. With TLS the Service also has an annotation of
// its own (the URI is added into the existing map, which is left alone).
func TestExternalURINodePort(t *testing.T) {
	t.Parallel()
	for _, tls := range []bool{false, true} {
		t.Run(fmt.Sprint("tls=", tls), func(t *testing.T) {
			t.Parallel()
			o := appOpts{svcType: corev1.ServiceTypeNodePort, tls: tls}
			if tls {
				o.svcAnn = map[string]string{"example.com/owner": "team-a"}
			}
			a := newApp(t, shared(t), o)
			ui := startUI(t, fakespark.Options{TLS: tls, AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
			r := start(t, a, uriConfig(t, a, "nodePort"))
			r.waitBound(t, ui.Port)
			scheme := "http"
			if tls {
				scheme = "https"
			}
			want := fmt.Sprintf("%s://%s:%d", scheme, hostIP, a.service_(t).Spec.Ports[0].NodePort)
			r.waitURI(t, want)
			if got, _ := a.resolved(t); got != want {
				t.Fatalf("annotation %q, want %q", got, want)
			}
			a.checkBound(t, ui.Port)

			ui.Close()
			r.waitWithdrawn(t)
			a.checkWithdrawn(t)
			if got, ok := a.resolved(t); ok {
				t.Errorf("annotation %q left after the withdrawal", got)
			}
			if ann := withoutStatus(a.service_(t).Annotations); tls && (len(ann) != 1 || ann["example.com/owner"] != "team-a") {
				t.Errorf("annotations %v, want only example.com/owner=team-a", ann)
			}
			if st := r.Status(); st.URI != "" {
				t.Errorf("status still has the URI after the withdrawal: %+v", st)
			}
			a.waitAudit(t, map[string]int{"patch": 3, "patch 200": 3, "get": 0})
		})
	}
}

// TestExternalURILoadBalancer: no URI until the load balancer's ingress is in the Service's
// status (polled with GET and backoff); then http://<ip>:<port>; SIGTERM removes it; no GET
// once published.
func TestExternalURILoadBalancer(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{svcType: corev1.ServiceTypeLoadBalancer})
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r := start(t, a, uriConfig(t, a, "loadBalancer"))
	r.waitBound(t, ui.Port)
	time.Sleep(700 * time.Millisecond)
	if got, ok := a.resolved(t); ok {
		t.Fatalf("annotation %q before the load balancer has an ingress", got)
	}
	if n := a.auditCounts(t)["get"]; n < 2 || n > 8 {
		t.Errorf("%d GETs in 700 ms while the ingress is pending, want a few (backoff 50 ms doubling to 400 ms)", n)
	}

	svc := a.service_(t)
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}}
	if _, err := a.c.Client.CoreV1().Services(a.ns).UpdateStatus(testcluster.Context(t, 10*time.Second), svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.waitURI(t, "http://203.0.113.7:4040")
	if got, _ := a.resolved(t); got != "http://203.0.113.7:4040" {
		t.Fatalf("annotation %q", got)
	}
	gets := a.auditCounts(t)["get"]
	time.Sleep(500 * time.Millisecond)
	if n := a.auditCounts(t)["get"]; n != gets {
		t.Errorf("%d GETs after the URI was published (had %d): polling must stop", n, gets)
	}

	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	a.checkWithdrawn(t)
	if got, ok := a.resolved(t); ok {
		t.Errorf("annotation %q left after SIGTERM", got)
	}
	a.waitAudit(t, map[string]int{"patch": 3, "patch 200": 3, "get": gets, "get 200": gets})
}

// TestExternalURIAnnotationMode: an outside controller writes the URI (service.externalURI:
// annotation); the withdrawal removes it in its one patch, and also when the controller had
// not written it yet (add + remove).
func TestExternalURIAnnotationMode(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{svcAnn: map[string]string{names.AnnotationProvideExternalURI: "true"}})
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r := start(t, a, a.config(t))
	r.waitBound(t, ui.Port)

	// The controller: a merge patch with the Service's resourceVersion.
	svc := a.service_(t)
	patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"annotations":{%q:"https://spark.example.com/ui"}}}`, svc.ResourceVersion, names.AnnotationResolvedExternalURI)
	if _, err := a.c.Client.CoreV1().Services(a.ns).Patch(testcluster.Context(t, 10*time.Second), a.service, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ui.Close()
	r.waitWithdrawn(t)
	a.checkWithdrawn(t)
	svc = a.service_(t)
	if got, ok := svc.Annotations[names.AnnotationResolvedExternalURI]; ok {
		t.Errorf("annotation %q left after the withdrawal", got)
	}
	if svc.Annotations[names.AnnotationProvideExternalURI] != "true" {
		t.Errorf("provide-external-uri touched: %v", svc.Annotations)
	}
	a.waitAudit(t, map[string]int{"patch": 2, "patch 200": 2, "get": 0})

	// Rebound, withdrawn before the controller wrote anything: still one patch.
	ui2 := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r.waitBound(t, ui2.Port)
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	a.checkWithdrawn(t)
	a.waitAudit(t, map[string]int{"patch": 4, "patch 200": 4, "get": 0})
}

// TestExternalURIRestart: the container restarted while bound with the URI published; the UI
// is gone: the first pass withdraws and removes the URI without knowing the Service's state
// (add + remove): one patch. Without the annotation map at all, the refused patch is followed
// by the plain withdrawal (TestRestartWithdrawsStaleBinding: 2 patches).
func TestExternalURIRestart(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{svcType: corev1.ServiceTypeNodePort})
	// As the previous run left it: bound (this Pod as owner, as every bind writes) and the URI.
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"http://%s:31999"},"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":%q,"uid":%q}]},`+
		`"spec":{"selector":{"spark-app-selector":%q,"spark-role":"driver"},"ports":[{"name":"spark-ui","port":4040,"targetPort":41234}]}}`,
		names.AnnotationResolvedExternalURI, hostIP, a.pod.Name, a.pod.UID, a.appID)
	if _, err := a.c.Client.CoreV1().Services(a.ns).Patch(testcluster.Context(t, 10*time.Second), a.service, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := uriConfig(t, a, "nodePort")
	if err := os.WriteFile(cfg.StateFile, []byte("41234\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := start(t, a, cfg)
	r.waitWithdrawn(t)
	a.checkWithdrawn(t)
	if got, ok := a.resolved(t); ok {
		t.Errorf("annotation %q left after the withdrawal", got)
	}
	a.waitAudit(t, map[string]int{"patch": 1, "patch 200": 1, "get": 0})
	if logs := r.logs.String(); strings.Contains(logs, "external URI published") {
		t.Errorf("published while the UI is gone:\n%s", logs)
	}
}

// withoutStatus is ann without the status annotations the runtime keeps.
func withoutStatus(ann map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range ann {
		if !strings.HasPrefix(k, names.AnnotationPrefix+"ui-") {
			out[k] = v
		}
	}
	return out
}
