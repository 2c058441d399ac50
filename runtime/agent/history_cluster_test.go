package agent_test

import (
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/agent"
	"github.com/sparkui/sparkui/runtime/control"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

const (
	historyURL     = "https://shs.example.com/spark"
	redirectorPort = 8081
)

func historyConfig(cfg agent.Config) agent.Config {
	cfg.HistoryURL, cfg.RedirectorPort = historyURL, redirectorPort
	return cfg
}

// addRedirector creates a Ready Pod labelled as the namespace's History Server redirector.
func (a *app) addRedirector(t testing.TB) string {
	t.Helper()
	ip := nextIP()
	a.addPodLabels(t, "history-redirector", ip, map[string]string{names.LabelHistoryRedirector: names.HistoryRedirectorValue})
	return ip
}

// endPod marks a driver Pod Succeeded (its containers exited): the endpoint controllers drop
// it, and its Service (owned by it) stays, as for a finished driver Pod kept for its logs.
func (a *app) endPod(t testing.TB, name string) {
	t.Helper()
	ctx := testcluster.Context(t, 10*time.Second)
	pod, err := a.c.Client.CoreV1().Pods(a.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodSucceeded
	for i := range pod.Status.Conditions {
		pod.Status.Conditions[i].Status = corev1.ConditionFalse
	}
	if _, err := a.c.Client.CoreV1().Pods(a.ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// checkHandedOff checks the Service as the API server has it after a hand-off.
func (a *app) checkHandedOff(t testing.TB) *corev1.Service {
	t.Helper()
	svc := a.service_(t)
	if len(svc.Spec.Selector) != 1 || svc.Spec.Selector[names.LabelHistoryRedirector] != "true" {
		t.Errorf("selector %v, want {%s: true}", svc.Spec.Selector, names.LabelHistoryRedirector)
	}
	if got := svc.Spec.Ports[0].TargetPort.IntValue(); got != redirectorPort {
		t.Errorf("targetPort %d, want the redirector's %d", got, redirectorPort)
	}
	if got, want := svc.Annotations[names.AnnotationHistoryURI], historyURL+"/history/"+a.appID+"/"; got != want {
		t.Errorf("%s = %q, want %q", names.AnnotationHistoryURI, got, want)
	}
	if u, ok := svc.Annotations[names.AnnotationResolvedExternalURI]; ok {
		t.Errorf("resolved external URI %q survived the hand-off", u)
	}
	checkStatus(t, svc, names.UIStateHandedOff, svc.Annotations[names.AnnotationUIPod], 0)
	if svc.Annotations[names.AnnotationUIPod] == "" {
		t.Errorf("no %s after the hand-off: %v", names.AnnotationUIPod, svc.Annotations)
	}
	return svc
}

// TestHistoryHandoff: with a History Server URL the preStop withdrawal hands the Service off
// in one guarded patch, status annotations included (state handed-off); the slices
// then hold the redirector Pod; a second Pod of the application takes the Service back with
// one patch.
func TestHistoryHandoff(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{})
	redirectorIP := a.addRedirector(t)
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	cfg := historyConfig(podNetwork(a.config(t), ui.Port))
	r := start(t, a, cfg)
	r.waitBound(t, ui.Port)
	a.waitSlice(t, ui.Port)

	if err := control.Withdraw(cfg.Socket, 10*time.Second); err != nil {
		t.Fatalf("withdraw: %v\n%s", err, r.logs.String())
	}
	a.checkHandedOff(t) // already, not eventually
	if st := r.Status(); st.Bound || !st.Final || st.HistoryURI != historyURL+"/history/"+a.appID+"/" {
		t.Errorf("status after the hand-off %+v", st)
	}
	if !strings.Contains(r.logs.String(), "handed off to the History Server redirector") {
		t.Errorf("the hand-off is not logged:\n%s", r.logs.String())
	}
	a.waitSliceIP(t, redirectorIP, redirectorPort)
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	a.waitAudit(t, map[string]int{"patch": 2, "patch 200": 2, "get": 0})
	a.endPod(t, a.pod.Name)

	// The next Pod of the application binds the handed-off Service: one patch.
	ip2 := nextIP()
	pod2 := a.addPod(t, "wordcount-driver-2", ip2)
	ui2 := startUI(t, fakespark.Options{AppID: a.appID, PodName: pod2.Name, Namespace: a.ns, State: fakespark.Ready})
	cfg2 := historyConfig(podNetwork(a.config(t), ui2.Port))
	cfg2.PodName, cfg2.PodUID = pod2.Name, string(pod2.UID)
	r2 := start(t, a, cfg2)
	r2.waitBound(t, ui2.Port)
	svc := a.service_(t)
	if len(svc.Spec.Selector) != 2 || svc.Spec.Selector[names.LabelAppSelector] != a.appID || svc.Spec.Ports[0].TargetPort.IntValue() != ui2.Port {
		t.Errorf("after the second Pod's bind: selector %v targetPort %v", svc.Spec.Selector, svc.Spec.Ports[0].TargetPort)
	}
	a.waitSliceIP(t, ip2, ui2.Port)
	a.waitAudit(t, map[string]int{"patch": 3, "patch 200": 3, "get": 0})
}

// TestHistoryLateHandoffRefused: a Pod whose binding a later Pod took over never hands the
// Service off: its hand-off is refused by the holder guard (both annotation forms, nothing
// changed), and the Service keeps routing to the later Pod.
func TestHistoryLateHandoffRefused(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{svcAnn: map[string]string{names.AnnotationFluxSSA: names.FluxSSAIfNotPresent}})
	a.addRedirector(t)
	ui1 := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	cfg1 := historyConfig(podNetwork(a.config(t), ui1.Port))
	r1 := start(t, a, cfg1)
	r1.waitBound(t, ui1.Port)

	ip2 := nextIP()
	pod2 := a.addPod(t, "wordcount-driver-2", ip2)
	ui2 := startUI(t, fakespark.Options{AppID: a.appID, PodName: pod2.Name, Namespace: a.ns, State: fakespark.Ready})
	cfg2 := historyConfig(podNetwork(a.config(t), ui2.Port))
	cfg2.PodName, cfg2.PodUID = pod2.Name, string(pod2.UID)
	r2 := start(t, a, cfg2)
	r2.waitBound(t, ui2.Port)

	if err := control.Withdraw(cfg1.Socket, 10*time.Second); err != nil {
		t.Fatalf("the first Pod's withdrawal: %v\n%s", err, r1.logs.String())
	}
	if !strings.Contains(r1.logs.String(), "this Pod does not hold the binding") {
		t.Errorf("the first runtime did not say the binding was not its own:\n%s", r1.logs.String())
	}
	svc := a.service_(t)
	if len(svc.Spec.Selector) != 2 || svc.Spec.Selector[names.LabelAppSelector] != a.appID || svc.Spec.Ports[0].TargetPort.IntValue() != ui2.Port {
		t.Errorf("the late hand-off undid the second Pod's bind: selector %v targetPort %v", svc.Spec.Selector, svc.Spec.Ports[0].TargetPort)
	}
	if _, ok := svc.Annotations[names.AnnotationHistoryURI]; ok {
		t.Errorf("history URI written by a refused hand-off: %v", svc.Annotations)
	}
	a.endPod(t, a.pod.Name)
	a.waitSliceIP(t, ip2, ui2.Port)
	// Two binds; the hand-off refused in both forms.
	a.waitAudit(t, map[string]int{"patch": 4, "patch 200": 2, "patch 422": 2, "get": 0})
}

// TestHistoryUIReturns: the UI going away hands the Service off (removing the URI an
// outside controller resolved meanwhile, in the same patch); a UI back on the port binds it
// again in one patch.
func TestHistoryUIReturns(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{svcAnn: map[string]string{names.AnnotationProvideExternalURI: "true"}})
	ui := startUI(t, fakespark.Options{AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	port := ui.Port
	r := start(t, a, historyConfig(podNetwork(a.config(t), port)))
	r.waitBound(t, port)
	// The outside controller resolves the URI.
	ctx := testcluster.Context(t, 10*time.Second)
	if _, err := a.c.Client.CoreV1().Services(a.ns).Patch(ctx, a.service, types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"sparkui.dev/resolved-external-uri":"https://ui.example.com"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	ui.Close()
	r.waitStatus(t, 20*time.Second, "handed off", func(s agent.Status) bool { return !s.Bound && s.HistoryURI != "" })
	a.checkHandedOff(t)

	startUI(t, fakespark.Options{Addr: addr(port), AppID: a.appID, PodName: a.pod.Name, Namespace: a.ns, State: fakespark.Ready})
	r.waitBound(t, port)
	a.checkBound(t, port)
	a.waitAudit(t, map[string]int{"patch": 3, "patch 200": 3, "get": 0})
}

// TestHistoryRestartWithoutVerifiedID: restarted after its UI went away, the runtime never
// verified an application id in this process: with a History Server URL it still withdraws
// plainly (no page it cannot name), and says why.
func TestHistoryRestartWithoutVerifiedID(t *testing.T) {
	t.Parallel()
	a := newApp(t, shared(t), appOpts{svcAnn: map[string]string{names.AnnotationFluxSSA: names.FluxSSAIfNotPresent}})
	patch := `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"` + a.pod.Name + `","uid":"` + string(a.pod.UID) + `"}]},` +
		`"spec":{"selector":{"spark-app-selector":"` + a.appID + `","spark-role":"driver"},"ports":[{"name":"spark-ui","port":4040,"targetPort":41234}]}}`
	if _, err := a.c.Client.CoreV1().Services(a.ns).Patch(testcluster.Context(t, 10*time.Second), a.service, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := historyConfig(a.config(t))
	if err := os.WriteFile(cfg.StateFile, []byte("41234\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := start(t, a, cfg)
	r.waitWithdrawn(t)
	a.checkWithdrawn(t)
	if st := r.Status(); st.HistoryURI != "" {
		t.Errorf("status %+v: handed off without a verified id", st)
	}
	if !strings.Contains(r.logs.String(), "not handed off to the History Server: this process verified no UI") {
		t.Errorf("the plain withdrawal is not explained:\n%s", r.logs.String())
	}
	if _, ok := a.service_(t).Annotations[names.AnnotationHistoryURI]; ok {
		t.Error("history URI written without a verified id")
	}
}
