package blackbox

// gitops_test.go: the appliers of reapply_test.go that stand for GitOps controllers.
//
// Flux runs here for real, as a library: kustomize-controller applies through
// github.com/fluxcd/pkg/ssa, so the test drives that module (v0.78.0) configured the way
// fluxcd/kustomize-controller configures it (internal/controller/kustomization_controller.go,
// funcs reconcile and apply, read at commit 186fb3b, which pins ssa v0.77.0): read the
// objects, label them with the Kustomization's name, normalize them through their typed form,
// ApplyAllStaged with its selectors and cleanup; drift is the apply's own change set and the
// manager's Diff as `flux diff kustomization` calls it (fluxcd/flux2 internal/build/diff.go).
//
// Argo CD runs for real too, as its engine: argocd_test.go.

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/normalize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/testkit/fluxtest"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// applier is one pipeline: how it applies the function's output (stream) and what its own
// drift detection says about the UI Service afterwards ("" = no drift).
type applier struct {
	name    string
	manager string // the field manager its writes are recorded under
	// createOnly: it applies the UI Service only while the Service does not exist.
	createOnly bool
	apply      func(t *testing.T, c *testcluster.Cluster, stream []byte) string
	drift      func(t *testing.T, c *testcluster.Cluster, stream []byte) string
}

// kubectlApplier applies with `kubectl apply args…` and reads drift with `kubectl diff` and
// the same flags, on the UI Service alone (the test's own status writes to the Pod are not
// the pipeline's business).
func kubectlApplier(name, manager string, args ...string) applier {
	return applier{name: name, manager: manager,
		apply: func(t *testing.T, c *testcluster.Cluster, stream []byte) string {
			return kubectl(t, c.KubeconfigFile(t, c.Config), stream, append(append([]string{"apply"}, args...), "-f", "-")...)
		},
		drift: func(t *testing.T, c *testcluster.Cluster, stream []byte) string {
			t.Helper()
			cmd := exec.Command("kubectl", append(append([]string{"--kubeconfig=" + c.KubeconfigFile(t, c.Config), "diff"}, args...), "-f", "-")...)
			cmd.Stdin = bytes.NewReader(uiServiceDoc(t, stream))
			out, err := cmd.CombinedOutput()
			if err == nil {
				return ""
			}
			if exit, ok := err.(*exec.ExitError); ok && exit.ExitCode() == 1 { // kubectl diff: 1 = differences found
				return string(out)
			}
			if strings.Contains(string(out), "conflict") { // what a server-side apply without force reports instead
				return string(out)
			}
			t.Fatalf("kubectl diff: %v\n%s", err, out)
			return ""
		}}
}

// uiServiceDoc is the UI Service's document of stream.
func uiServiceDoc(t *testing.T, stream []byte) []byte {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(stream), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.GetKind() == "Service" {
			return []byte(n.MustString())
		}
	}
	t.Fatalf("no Service in\n%s", stream)
	return nil
}

// kustomize-controller's names (api/v1 GroupVersion, main.go controllerName) and the
// Kustomization the objects are labelled as coming from.
// olderOutput is stream as an older sparkui emitted it: the UI Service without the Flux
// annotation and declaring targetPort 4040. Every applier's drift check must see that one
// (a check that never reports anything would pass the test for nothing).
func olderOutput(t *testing.T, stream []byte) []byte {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(stream), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.GetKind() != "Service" {
			continue
		}
		if err := n.PipeE(yaml.ClearAnnotation(names.AnnotationFluxSSA)); err != nil {
			t.Fatal(err)
		}
		if err := n.PipeE(yaml.Lookup("spec", "ports", "[name=spark-ui]"), yaml.SetField("targetPort", yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: "4040"}))); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := (kio.ByteWriter{Writer: &buf}).Write(nodes); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const (
	fluxGroup   = "kustomize.toolkit.fluxcd.io"
	fluxManager = "kustomize-controller"
	fluxSSA     = fluxGroup + "/ssa" // the per-object apply policy annotation
	fluxRecon   = fluxGroup + "/reconcile"
	fluxKs      = "sparkui"
	fluxKsNs    = "flux-system"
)

// fluxApplier is kustomize-controller's apply, with spec.force as given.
func fluxApplier(name string, force bool) applier {
	return applier{name: name, manager: fluxManager, createOnly: true,
		apply: func(t *testing.T, c *testcluster.Cluster, stream []byte) string {
			t.Helper()
			m, objects := fluxObjects(t, c, stream)
			cs, err := m.ApplyAllStaged(testcluster.Context(t, 60*time.Second), objects, fluxtest.ApplyOptions(force))
			if err != nil {
				t.Fatalf("flux apply: %v", err)
			}
			return cs.String()
		},
		drift: func(t *testing.T, c *testcluster.Cluster, stream []byte) string {
			t.Helper()
			return fluxDrift(t, c, stream, force)
		}}
}

func fluxObjects(t *testing.T, c *testcluster.Cluster, stream []byte) (*ssa.ResourceManager, []*unstructured.Unstructured) {
	t.Helper()
	// controller-runtime prints a stack trace once when its client logs before a logger is set.
	ctrllog.SetLogger(logr.Discard())
	kc, err := client.New(c.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// No status poller: it only waits for CRDs, Namespaces and ClusterRoles, which the
	// function does not emit.
	m := ssa.NewResourceManager(kc, nil, ssa.Owner{Field: fluxManager, Group: fluxGroup})
	objects, err := ssautil.ReadObjects(bytes.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	m.SetOwnerLabels(objects, fluxKs, fluxKsNs)
	// The step that matters: a Service port with no targetPort comes out of the typed form
	// as targetPort: 0, which the API server defaults to the port; Flux then applies (and,
	// forcing ownership, takes) a targetPort the manifests never declared.
	if err := normalize.UnstructuredList(objects); err != nil {
		t.Fatal(err)
	}
	return m, objects
}

// fluxDrift is "" when neither of Flux's drift checks sees the UI Service changed: the
// dry-run apply inside ApplyAllStaged (what kustomize-controller reports as drift and then
// corrects) and ResourceManager.Diff with the options of `flux diff kustomization`.
func fluxDrift(t *testing.T, c *testcluster.Cluster, stream []byte, force bool) string {
	t.Helper()
	m, objects := fluxObjects(t, c, stream)
	var svc *unstructured.Unstructured
	for _, o := range objects {
		if o.GetKind() == "Service" {
			svc = o
		}
	}
	entry, live, merged, err := m.Diff(testcluster.Context(t, 30*time.Second), svc, ssa.DiffOptions{
		Exclusions:           map[string]string{fluxRecon: "disabled", fluxSSA: "ignore"},
		IfNotPresentSelector: map[string]string{fluxSSA: "ifnotpresent"},
		Force:                force,
	})
	if err != nil {
		t.Fatalf("flux diff: %v", err)
	}
	if entry.Action == ssa.SkippedAction || entry.Action == ssa.UnchangedAction {
		return ""
	}
	var d strings.Builder
	fmt.Fprintf(&d, "flux diff: %s", entry)
	if live != nil && merged != nil {
		lp, _, _ := unstructured.NestedSlice(live.Object, "spec", "ports")
		mp, _, _ := unstructured.NestedSlice(merged.Object, "spec", "ports")
		ls, _, _ := unstructured.NestedStringMap(live.Object, "spec", "selector")
		ms, _, _ := unstructured.NestedStringMap(merged.Object, "spec", "selector")
		fmt.Fprintf(&d, "\n.spec.ports live=%v want=%v\n.spec.selector live=%v want=%v", lp, mp, ls, ms)
	}
	return d.String()
}
