package testcluster

import (
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
)

const validService = `
apiVersion: v1
kind: Service
metadata:
  name: ui
  labels: {app: spark}
spec:
  selector: {spark-role: driver}
  ports:
  - name: spark-ui
    port: 4040
    targetPort: 4040
`

func TestDryRunAcceptsValidService(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 30*time.Second)
	if err := c.DryRunCreateYAML(ctx, []byte(validService)); err != nil {
		t.Fatalf("valid Service rejected: %v", err)
	}
	// Dry run: nothing was stored.
	if _, err := c.Client.CoreV1().Services("default").Get(ctx, "ui", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("dry-run create stored the Service (get: %v)", err)
	}
}

func TestDryRunCreatesMissingNamespace(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 30*time.Second)
	ns := "dry-run-" + rand.String(6)
	doc := strings.Replace(validService, "  name: ui\n", "  name: ui\n  namespace: "+ns+"\n", 1)
	if err := c.DryRunCreateYAML(ctx, []byte(doc)); err != nil {
		t.Fatalf("Service in a new namespace rejected: %v", err)
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		t.Fatalf("namespace %s not created: %v", ns, err)
	}
}

func TestDryRunRejectsServicePortZero(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 30*time.Second)
	doc := strings.Replace(validService, "    port: 4040\n", "    port: 0\n", 1)
	err := c.DryRunCreateYAML(ctx, []byte(doc))
	if err == nil {
		t.Fatal("Service with port 0 accepted")
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want 422 Invalid, got %v (%T)", err, err)
	}
	if !strings.Contains(err.Error(), "spec.ports[0].port") {
		t.Fatalf("error does not name spec.ports[0].port: %v", err)
	}
}

func TestDryRunRejectsContainerPortZero(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 30*time.Second)
	pod := `
apiVersion: v1
kind: Pod
metadata: {name: driver}
spec:
  containers:
  - name: spark-kubernetes-driver
    image: spark:4.0.0
    ports:
    - {name: spark-ui, containerPort: 0, protocol: TCP}
`
	err := c.DryRunCreateYAML(ctx, []byte(pod))
	if err == nil {
		t.Fatal("Pod with containerPort 0 accepted")
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want 422 Invalid, got %v", err)
	}
	if !strings.Contains(err.Error(), "spec.containers[0].ports[0].containerPort") {
		t.Fatalf("error does not name the containerPort: %v", err)
	}
	// The same Pod with a real port passes: the rejection was about the port.
	if err := c.DryRunCreateYAML(ctx, []byte(strings.Replace(pod, "containerPort: 0", "containerPort: 4040", 1))); err != nil {
		t.Fatalf("valid Pod rejected: %v", err)
	}
}

func TestDryRunRejectsUnknownField(t *testing.T) {
	c := cluster(t)
	ctx := Context(t, 30*time.Second)
	doc := strings.Replace(validService, "spec:\n", "spec:\n  selectorr: {a: b}\n", 1)
	err := c.DryRunCreateYAML(ctx, []byte(doc))
	if err == nil {
		t.Fatal("unknown field accepted")
	}
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `unknown field "spec.selectorr"`) {
		t.Fatalf("want 400 naming unknown field spec.selectorr, got %v", err)
	}
}

func TestDryRunUnknownKind(t *testing.T) {
	c := cluster(t)
	err := c.DryRunCreateYAML(Context(t, 30*time.Second), []byte("apiVersion: sparkui.dev/v1alpha1\nkind: Nope\nmetadata: {name: x}\n"))
	if err == nil || !strings.Contains(err.Error(), "sparkui.dev") {
		t.Fatalf("want a no-match error for an unknown kind, got %v", err)
	}
}

func TestDecodeYAMLErrors(t *testing.T) {
	for _, doc := range []string{"", "---\n", "a: [", "kind: Service\nkind: Pod\n"} {
		if _, err := DecodeYAML([]byte(doc)); err == nil {
			t.Errorf("DecodeYAML(%q): no error", doc)
		}
	}
}
