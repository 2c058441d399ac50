package examples_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// TestHistoryRedirectorExample: every object of the redirector example is accepted by a real
// kube-apiserver (server-side dry run, strict field validation), its Pods carry the label
// handed-off Services select, it listens on the default redirector port, and its image is the
// runtime of this version, and it is told its History Server URL. (runtime's
// TestRedirectorBinary runs its RBAC for real.)
func TestHistoryRedirectorExample(t *testing.T) {
	src, err := os.ReadFile("history-redirector/redirector.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		names.LabelHistoryRedirector + `: "true"`,
		"image: " + version.RuntimeImage(),
		"--redirector-port=8080",
		"containerPort: 8080",
		// It lists and watches; it never reads one Service (TestRedirectorBinary counts its requests).
		`verbs: ["list", "watch"]`,
		"name: " + sidecar.EnvHistoryURL,
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the example lacks %q", want)
		}
	}
	if sidecar.DefaultRedirectorPort != 8080 {
		t.Errorf("the example's port is 8080, the default %d", sidecar.DefaultRedirectorPort)
	}
	c := testcluster.Shared(t, dualStack(t))
	docs := strings.Split(string(src), "\n---\n")
	if len(docs) != 4 {
		t.Fatalf("%d documents, want ServiceAccount, Role, RoleBinding, Deployment", len(docs))
	}
	for _, doc := range docs {
		if err := c.DryRunCreateYAML(context.Background(), []byte(doc)); err != nil {
			t.Errorf("%v\n%s", err, doc)
		}
	}
	// The check can fail: a misspelt field is refused.
	bad := strings.Replace(docs[3], "readinessProbe:", "readynessProbe:", 1)
	if err := c.DryRunCreateYAML(context.Background(), []byte(bad)); err == nil || !strings.Contains(err.Error(), "readynessProbe") {
		t.Errorf("a misspelt field was not refused: %v", err)
	}
}
