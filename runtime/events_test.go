package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/events"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// TestConfigErrorEvent: the binary with a setting it refuses records a Warning ConfigError
// Event about the driver Pod, with the reason, while it idles; then exits 0 on SIGTERM.
func TestConfigErrorEvent(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	appID, svc := "spark-"+ns, "wordcount-ui-svc"
	pod := setup(t, c, ns, appID, svc)
	ctx := testcluster.Context(t, 30*time.Second)
	// The events rule sparkui-fn writes (transform/rbac.go), beside setup's Service rule.
	c.AddRoleRule(t, ns, sidecar.DefaultRole(svc), "spark", rbacv1.PolicyRule{APIGroups: []string{sidecar.EventsAPIGroup},
		Resources: []string{sidecar.EventsResource}, Verbs: sidecar.EventsVerbs})
	kubeconfig := c.KubeconfigFile(t, c.ServiceAccountConfig(t, ns, "spark"))
	env := []string{"KUBECONFIG=" + kubeconfig, "POD_NAME=" + pod.Name, "POD_NAMESPACE=" + ns, "POD_UID=" + string(pod.UID)}
	p := startProc(t, env, "run", "--service="+svc, "--app-id="+appID, "--poll-interval=1ns",
		"--termination-log="+filepath.Join(t.TempDir(), "termination-log"))

	const reason = "--poll-interval 1ns: must be at least 10ms"
	var found string
	testcluster.WaitFor(t, 15*time.Second, "a ConfigError Event about the driver Pod", func() (bool, string) {
		list, err := c.Client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range list.Items {
			seen = append(seen, e.Type+" "+e.Reason+" "+e.Regarding.Name+": "+e.Note)
			if e.Reason == events.ReasonConfigError && e.Type == "Warning" && e.ReportingController == events.ReportingController &&
				e.Regarding.Kind == "Pod" && e.Regarding.Name == pod.Name && e.Regarding.UID == pod.UID && strings.Contains(e.Note, reason) {
				found = e.Type + " " + e.Reason + " " + e.Action + " regarding Pod/" + e.Regarding.Name + ": " + e.Note
				return true, ""
			}
		}
		return false, strings.Join(seen, "; ") + "\nruntime output:\n" + p.out.String()
	})
	t.Logf("Event: %s", found)
	if code := p.sigterm(t, 10*time.Second); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0\n%s", code, p.out.String())
	}
}
