package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/runtime/verb"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// TestRedirectorHostileApp: two applications in one namespace, each with the RBAC sparkui-fn
// emits (its driver's ServiceAccount may get and patch its own UI Service, no other). The
// victim's run ends and the built runtime hands its Service off; the hostile application's
// code then patches ITS OWN Service, as any driver can: selector = the redirector's, the
// victim's route host, a longer prefix under the victim's, an exact copy of it, and history
// URIs to evil.example, javascript: and //evil. The built redirector (as the example's
// ServiceAccount) answers the victim's requests through its route with the victim's page on
// the redirector's own History Server URL at every step, never evil.example; it refuses the
// claims that give no valid application id with a log line naming the hostile Service and
// why, once per change; and a request without the route's header that both claims match is
// refused (404), never given to the longer or later claim.
func TestRedirectorHostileApp(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	victimID, victimSvc, hostileSvc := "spark-victim"+strings.ReplaceAll(ns, "-", ""), "victim-ui-svc", "hostile-ui-svc"
	const host, prefix, ownURL = "spark.example.com", "/apps/victim", "https://history.example.org"
	pod := setup(t, c, ns, victimID, victimSvc)
	ctx := testcluster.Context(t, 120*time.Second)
	// The victim's route, as the function wrote it on the Service.
	if _, err := c.Client.CoreV1().Services(ns).Patch(ctx, victimSvc, types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"sparkui.dev/route-host":"`+host+`","sparkui.dev/route-prefix":"`+prefix+`"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// The hostile application: its own UI Service, Role and RoleBinding for its own
	// ServiceAccount, as sparkui-fn emits them.
	if _, err := c.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: hostileSvc, Namespace: ns, Labels: map[string]string{names.LabelManagedBy: names.ManagedByValue, names.LabelAppSelector: "spark-hostile"},
			Annotations: map[string]string{names.AnnotationRouteHost: "hostile.example.com", names.AnnotationRoutePrefix: "/"}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: names.UIPortName, Port: 4040}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := sidecar.DefaultRole(hostileSvc)
	if _, err := c.Client.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: role},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"services"}, ResourceNames: []string{hostileSvc}, Verbs: sidecar.RuntimeVerbs}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "hostile", Namespace: ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hostile, err := kubernetes.NewForConfig(c.ServiceAccountConfig(t, ns, "hostile"))
	if err != nil {
		t.Fatal(err)
	}

	redirector := startRedirector(t, c, ns, ownURL)
	port, base := redirector.port, redirector.base

	// The victim's run: bound by the built runtime, handed off at SIGTERM.
	ui, err := fakespark.Start(fakespark.Options{AppID: victimID, PodName: pod.Name, Namespace: ns, State: fakespark.Ready})
	if err != nil {
		t.Fatal(err)
	}
	defer ui.Close()
	rt := startHandoffRuntime(t, c, ns, pod, victimSvc, victimID, port)
	testcluster.WaitFor(t, 20*time.Second, "the bind", func() (bool, string) {
		sel, _ := selector(t, c, ns, victimSvc)
		return sel[names.LabelAppSelector] == victimID, fmt.Sprint(sel)
	})
	if code := rt.sigterm(t, 15*time.Second); code != verb.ExitOK {
		t.Fatalf("runtime exit %d\n%s", code, rt.out.String())
	}
	want := ownURL + "/history/" + victimID + "/"
	// What the victim's users send: through the victim's HTTPRoute (prefix stripped, the two
	// headers set by the route), and through a route that sets no header (an Ingress).
	viaRoute := map[string]string{"X-Sparkui-Service": victimSvc, "X-Forwarded-Context": prefix}
	victimRequests := func(step string, headerless int) {
		t.Helper()
		for _, path := range []string{"/", "/jobs/job/?id=1", "/jobs/"} {
			code, loc, body, err := get(t, base+path, host, viaRoute)
			if err != nil || code != 302 || loc != want {
				t.Errorf("%s: through the victim's route %s: %d %q %q %v, want 302 %q", step, path, code, loc, body, err, want)
			}
		}
		code, loc, body, err := get(t, base+prefix+"/jobs/job/?id=1", host+":443", nil)
		if err != nil || code != headerless || (code == 302) != (loc == want) || strings.Contains(loc, "evil") {
			t.Errorf("%s: without the route's header: %d %q %q %v, want %d", step, code, loc, body, err, headerless)
		}
	}
	testcluster.WaitFor(t, 10*time.Second, "the victim's redirect", func() (bool, string) {
		code, loc, body, err := get(t, base+"/", host, viaRoute)
		return err == nil && code == 302 && loc == want, fmt.Sprint(code, " ", loc, " ", body, err)
	})
	victimRequests("handed off", 302)

	// The hostile driver's token cannot touch the victim's Service (the premise).
	if _, err := hostile.CoreV1().Services(ns).Patch(ctx, victimSvc, types.MergePatchType, []byte(`{"metadata":{"annotations":{"x":"y"}}}`), metav1.PatchOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the hostile ServiceAccount patched the victim's Service: %v", err)
	}
	claim := func(step, routePrefix, uri string, wantLog string, headerless int) {
		t.Helper()
		patch, _ := json.Marshal(map[string]any{
			"metadata": map[string]any{"annotations": map[string]string{names.AnnotationRouteHost: host, names.AnnotationRoutePrefix: routePrefix, names.AnnotationHistoryURI: uri}},
			"spec":     map[string]any{"selector": map[string]any{names.LabelSparkRole: nil, names.LabelAppSelector: nil, names.LabelHistoryRedirector: names.HistoryRedirectorValue}},
		})
		if _, err := hostile.CoreV1().Services(ns).Patch(ctx, hostileSvc, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s: the hostile application's patch of its own Service: %v", step, err)
		}
		testcluster.WaitFor(t, 10*time.Second, step+": the redirector's log", func() (bool, string) {
			return strings.Contains(redirector.out.String(), wantLog), redirector.out.String()
		})
		victimRequests(step, headerless)
	}
	refusal := `msg="refusing the hand-off of a UI Service: it will not be redirected" namespace=` + ns + ` service=` + hostileSvc
	claim("longer prefix, evil URI", prefix+"/jobs", "https://evil.example/phish", refusal+` reason="its sparkui.dev/history-uri annotation (26 characters) its path is not …/history/<app id>/"`, 302)
	claim("longer prefix, javascript:", prefix+"/jobs", "javascript:alert(1)", refusal+` reason="its sparkui.dev/history-uri annotation (19 characters) not an absolute http(s) URL"`, 302)
	claim("exact copy, //evil", prefix, "//evil.example/history/spark-x/", refusal+` reason="its sparkui.dev/history-uri annotation (31 characters) not an absolute http(s) URL"`, 302)
	// A claim with a valid id: accepted for the hostile Service's own route, and the overlap
	// refuses requests without the header that both match — a denial, not a take-over.
	overlap := `overlapping route claims: a request without the X-Sparkui-Service header (an Ingress, an older route) that matches more than one of them is refused" namespace=` + ns + ` services="` + hostileSvc + " and " + victimSvc + `"`
	claim("longer prefix, valid id on evil base", prefix+"/jobs", "https://evil.example/history/spark-hostile/", overlap, 404)
	claim("exact copy, valid id", prefix, "https://shs.example.com/history/spark-hostile/", `service=`+hostileSvc+` app_id=spark-hostile route_host=`+host+` route_prefix=`+prefix+"\n", 404)
	if code, loc, _, err := get(t, base+"/", host, map[string]string{"X-Sparkui-Service": hostileSvc}); err != nil || code != 302 || loc != ownURL+"/history/spark-hostile/" {
		t.Errorf("through the hostile route: %d %q %v, want its own id on the redirector's URL", code, loc, err)
	}
	out := redirector.out.String()
	if strings.Contains(out, "evil.example") {
		t.Errorf("the log repeats a driver's URI:\n%s", out)
	}
	if n := strings.Count(out, refusal); n != 3 {
		t.Errorf("%d refusal lines for three changes:\n%s", n, out)
	}
	t.Logf("redirector log:\n%s", out)
}
