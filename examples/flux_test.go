package examples_test

// flux_test.go: docs/deploy-flux.md's CI recipe, run with the real Flux CLI (built from
// github.com/fluxcd/flux2/v2 by `make flux`), the distribution registry and a real control
// plane; then the artifact applied as kustomize-controller applies it (fluxcd/pkg/ssa with its
// options, testkit/fluxtest), the runtime's bind, and a re-apply that must leave the bind.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/normalize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	"github.com/go-logr/logr"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/binder"
	"github.com/sparkui/sparkui/testkit/fluxtest"
	"github.com/sparkui/sparkui/testkit/imagetest"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

const (
	fluxKs     = "spark-apps" // examples/flux-ci/clusters/prod/spark-apps.yaml
	fluxKsNs   = "flux-system"
	fluxGitSHA = "0123456789abcdef0123456789abcdef01234567"
	fluxGitURL = "https://github.com/example-org/spark-apps"
)

func TestDeployFlux(t *testing.T) {
	flux := fluxtest.Bin(t)
	// The binary is the version the build script pins, stamped as flux2's own build stamps it.
	script := string(readFile(t, filepath.Join(root, "testkit", "fluxtest", "build-flux.sh")))
	if !strings.Contains(script, "\nFLUX_VERSION="+fluxtest.Version+"\n") {
		t.Errorf("testkit/fluxtest/build-flux.sh does not pin FLUX_VERSION=%s (fluxtest.Version)", fluxtest.Version)
	}
	if out, err := exec.Command(flux, "--version").Output(); err != nil || strings.TrimSpace(string(out)) != "flux version "+strings.TrimPrefix(fluxtest.Version, "v") {
		t.Errorf("flux --version: %q, %v; want flux version %s", out, err, strings.TrimPrefix(fluxtest.Version, "v"))
	}
	kustomize := kustomizeBin(t)
	registry := imagetest.StartRegistry(t)

	// The application repository: the kubeflow example as the overlay (its exec path,
	// ../../bin/sparkui-fn, is the workspace's bin/), the cluster's Flux objects.
	ws := t.TempDir()
	if err := os.CopyFS(filepath.Join(ws, "apps", "spark"), os.DirFS(filepath.Join(root, "examples", "kubeflow"))); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(ws, "clusters"), os.DirFS(filepath.Join(root, "examples", "flux-ci", "clusters"))); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(ws, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"sparkui-fn": filepath.Join(root, "bin", "sparkui-fn"), "kustomize": kustomize, "flux": flux} {
		if err := os.Symlink(path, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	// No cluster, and no credentials of the machine's: the recipe needs neither.
	env := []string{"KUBECONFIG=" + filepath.Join(ws, "no-kubeconfig"), "DOCKER_CONFIG=" + filepath.Join(ws, "docker-config"), "HOME=" + ws}
	recipeEnv := append([]string{"REGISTRY=" + registry, "GIT_SHA=" + fluxGitSHA, "GIT_URL=" + fluxGitURL}, env...)
	runScript(t, ws, bin, docBlock(t, "docs/deploy-flux.md", "TestDeployFlux"), recipeEnv...)

	rendered := readFile(t, filepath.Join(ws, "deploy", "spark-apps", "manifests.yaml"))
	built := readFile(t, filepath.Join(ws, "flux-build.yaml"))
	checkFile(t, "examples/flux-ci/expected-flux-build.yaml", built)
	checkFluxBuild(t, rendered, built)

	// Flux's own build of the unrendered overlay: what kustomize-controller would do with
	// it. It must refuse the sparkui transformer, not skip it.
	code, out := runFlux(t, ws, bin, env, "build", "kustomization", fluxKs, "--path", "apps/spark",
		"--kustomization-file", "clusters/prod/spark-apps.yaml", "--dry-run")
	if want := "external plugins disabled; unable to load external plugin 'SparkUIService'"; code == 0 || !strings.Contains(out, want) {
		t.Errorf("flux build of the unrendered overlay: exit %d, want a failure saying %q:\n%s", code, want, out)
	}

	// The artifact, as source-controller would fetch it: the tag the OCIRepository follows.
	pulled := filepath.Join(ws, "pulled")
	if err := os.Mkdir(pulled, 0o755); err != nil { // flux pull artifact wants it to exist
		t.Fatal(err)
	}
	if code, out := runFlux(t, ws, bin, env, "pull", "artifact", "oci://"+registry+"/spark-apps:main", "--output", pulled); code != 0 {
		t.Fatalf("flux pull artifact: exit %d\n%s", code, out)
	}
	entries, err := os.ReadDir(pulled)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "manifests.yaml" {
		t.Errorf("the artifact holds %v, want manifests.yaml alone", entries)
	}
	if got := readFile(t, filepath.Join(pulled, "manifests.yaml")); !bytes.Equal(got, rendered) {
		t.Errorf("the pulled manifests.yaml differs from the rendered one")
	}
	checkArtifact(t, registry, ws, bin, env)

	// kustomize-controller's build of the pulled directory is what CI showed.
	var controllerBuild []byte
	if code, out := runFluxOut(t, ws, bin, env, &controllerBuild, "build", "kustomization", fluxKs, "--path", pulled,
		"--kustomization-file", "clusters/prod/spark-apps.yaml", "--dry-run"); code != 0 {
		t.Fatalf("flux build of the pulled artifact: exit %d\n%s", code, out)
	}
	if !bytes.Equal(controllerBuild, built) {
		t.Errorf("the build of the pulled artifact differs from CI's flux-build.yaml")
	}
	applyAsKustomizeController(t, controllerBuild)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkFile compares got with the file at path (relative to the root), or rewrites it with
// -update.
func checkFile(t *testing.T, path string, got []byte) {
	t.Helper()
	full := filepath.Join(root, path)
	if *update {
		if err := os.WriteFile(full, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(full)
	if err != nil {
		t.Fatalf("%v (go test ./examples -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (-update rewrites it):\n--- got\n%s", path, got)
	}
}

// runFlux runs the Flux CLI in dir and returns its exit code and combined output.
func runFlux(t *testing.T, dir, bin string, env []string, args ...string) (int, string) {
	t.Helper()
	return runFluxOut(t, dir, bin, env, nil, args...)
}

// runFluxOut is runFlux with stdout kept apart in *stdout when it is not nil.
func runFluxOut(t *testing.T, dir, bin string, env []string, stdout *[]byte, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "flux"), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH")), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if stdout == nil {
		cmd.Stdout = &errOut
	}
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("flux %s: %v", strings.Join(args, " "), err)
	}
	if stdout != nil {
		*stdout = out.Bytes()
	}
	return cmd.ProcessState.ExitCode(), errOut.String()
}

// checkFluxBuild: Flux's build holds exactly the rendered objects, each with Flux's two owner
// labels added (fluxcd/flux2 internal/build/build.go, setOwnerLabels) and nothing else
// changed; the UI Services keep the IfNotPresent annotation.
func checkFluxBuild(t *testing.T, rendered, built []byte) {
	t.Helper()
	read := func(b []byte) map[string]*kyaml.RNode {
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b), OmitReaderAnnotations: true}).Read()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]*kyaml.RNode{}
		for _, n := range nodes {
			m[n.GetKind()+" "+n.GetNamespace()+"/"+n.GetName()] = n
		}
		return m
	}
	r, b := read(rendered), read(built)
	if len(r) != len(b) || len(r) < 8 {
		t.Fatalf("rendered %d objects, Flux built %d", len(r), len(b))
	}
	services := 0
	for id, n := range b {
		want, ok := r[id]
		if !ok {
			t.Errorf("Flux built %s, which the render did not", id)
			continue
		}
		labels := n.GetLabels()
		if labels[fluxtest.Group+"/name"] != fluxKs || labels[fluxtest.Group+"/namespace"] != fluxKsNs {
			t.Errorf("%s: Flux's owner labels missing: %v", id, labels)
		}
		stripped := n.Copy()
		for _, k := range []string{fluxtest.Group + "/name", fluxtest.Group + "/namespace"} {
			if err := stripped.PipeE(kyaml.Lookup("metadata", "labels"), kyaml.Clear(k)); err != nil {
				t.Fatal(err)
			}
		}
		if len(stripped.GetLabels()) == 0 {
			// The render had no labels on it: clearing Flux's leaves an empty map behind.
			if err := stripped.PipeE(kyaml.Lookup("metadata"), kyaml.Clear("labels")); err != nil {
				t.Fatal(err)
			}
		}
		if a, b := mustJSON(t, stripped), mustJSON(t, want); a != b {
			t.Errorf("%s: Flux changed more than its labels:\n%s\nwas\n%s", id, a, b)
		}
		if n.GetKind() == "Service" && labels[names.LabelManagedBy] == names.ManagedByValue {
			services++
			if got := n.GetAnnotations()[fluxtest.SSAAnnotation]; got != "IfNotPresent" {
				t.Errorf("%s: %s = %q after Flux's build, want IfNotPresent", id, fluxtest.SSAAnnotation, got)
			}
		}
	}
	if services != 2 {
		t.Errorf("Flux built %d UI Services, want 2 (spark-pi, nightly-pi)", services)
	}
}

func mustJSON(t *testing.T, n *kyaml.RNode) string {
	t.Helper()
	b, err := n.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkArtifact: the pushed artifact carries the source and revision (Flux writes them as
// the OCI annotations org.opencontainers.image.source and .revision, which source-controller
// reports), the main tag is the commit's artifact, and a second push of the same commit gives
// the same digest (--reproducible).
func checkArtifact(t *testing.T, registry, ws, bin string, env []string) {
	t.Helper()
	digest := func(tag string) string {
		ref, err := name.ParseReference(registry + "/spark-apps:" + tag)
		if err != nil {
			t.Fatal(err)
		}
		d, err := remote.Get(ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		return d.Digest.String()
	}
	ref, err := name.ParseReference(registry + "/spark-apps:" + fluxGitSHA)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.source":   fluxGitURL,
		"org.opencontainers.image.revision": "main@sha1:" + fluxGitSHA,
	} {
		if got := m.Annotations[k]; got != want {
			t.Errorf("artifact annotation %s = %q, want %q (all: %v)", k, got, want, m.Annotations)
		}
	}
	if a, b := digest("main"), digest(fluxGitSHA); a != b {
		t.Errorf("tag main is %s, the commit's artifact %s", a, b)
	}
	if code, out := runFlux(t, ws, bin, env, "push", "artifact", "oci://"+registry+"/spark-apps:again", "--path", "deploy/spark-apps",
		"--source", fluxGitURL, "--revision", "main@sha1:"+fluxGitSHA, "--reproducible"); code != 0 {
		t.Fatalf("flux push artifact (again): exit %d\n%s", code, out)
	}
	if a, b := digest("again"), digest(fluxGitSHA); a != b {
		t.Errorf("a second --reproducible push of the same commit gave %s, the first %s", a, b)
	}
}

// applyAsKustomizeController applies built (Flux's build of the artifact) the way
// kustomize-controller's func apply does, on a control plane of its own with the kubeflow
// CRDs; binds spark-pi's UI Service with the runtime's own patch; applies again; and checks
// that the second apply skipped the Service and the bind is intact.
func applyAsKustomizeController(t *testing.T, built []byte) {
	t.Helper()
	c := testcluster.Start(t, testcluster.Options{CRDDirectoryPaths: []string{"../testdata/assets/crds"}})
	ctrllog.SetLogger(logr.Discard())
	kc, err := client.New(c.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := ssa.NewResourceManager(kc, nil, ssa.Owner{Field: fluxtest.Manager, Group: fluxtest.Group})
	apply := func() *ssa.ChangeSet {
		t.Helper()
		objects, err := ssautil.ReadObjects(bytes.NewReader(built))
		if err != nil {
			t.Fatal(err)
		}
		if err := normalize.UnstructuredList(objects); err != nil {
			t.Fatal(err)
		}
		cs, err := m.ApplyAllStaged(testcluster.Context(t, 60*time.Second), objects, fluxtest.ApplyOptions(false))
		if err != nil {
			t.Fatalf("apply as kustomize-controller: %v", err)
		}
		return cs
	}
	c.EnsureNamespace(t, "spark-jobs")
	first := apply()
	actions := func(cs *ssa.ChangeSet) map[string]ssa.Action {
		a := map[string]ssa.Action{}
		for _, e := range cs.Entries {
			a[e.Subject] = e.Action
		}
		return a
	}
	const svcName = "spark-pi-sparkui-ui-svc"
	svcSubject := "Service/spark-jobs/" + svcName
	if got := actions(first)[svcSubject]; got != ssa.CreatedAction {
		t.Fatalf("first apply: %s %s, want created:\n%s", svcSubject, got, first)
	}

	// The runtime's bind, with the settings the function gave spark-pi's sidecar.
	target := sidecarTarget(t, built, "spark-pi")
	const port = 43383
	patch := target.BindPatch(port)
	ctx := context.Background()
	if _, err := c.Client.CoreV1().Services("spark-jobs").Patch(ctx, svcName, types.JSONPatchType, patch,
		metav1.PatchOptions{FieldManager: binder.FieldManager}); err != nil {
		t.Fatalf("the runtime's bind patch %s: %v", patch, err)
	}

	second := apply()
	for subject, a := range actions(second) {
		want := ssa.UnchangedAction
		if subject == svcSubject || strings.HasPrefix(subject, "Service/") {
			want = ssa.SkippedAction
		}
		if a != want {
			t.Errorf("re-apply: %s %s, want %s", subject, a, want)
		}
	}
	svc, err := c.Client.CoreV1().Services("spark-jobs").Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := svc.Spec.Ports[0].TargetPort.IntValue(); got != port {
		t.Errorf("after the re-apply the UI Service targets %d, want the bound %d", got, port)
	}
	if got, want := fmt.Sprint(svc.Spec.Selector), fmt.Sprint(target.Selector); got != want {
		t.Errorf("after the re-apply the selector is %s, want the bound %s", got, want)
	}
	for _, mf := range svc.ManagedFields {
		if mf.Manager == fluxtest.Manager && mf.FieldsV1 != nil && strings.Contains(mf.FieldsV1.GetRawString(), "targetPort") {
			t.Errorf("kustomize-controller owns targetPort: %s", mf.FieldsV1.GetRawString())
		}
	}
}

// sidecarTarget is the binder target of application app's runtime, from the sidecar args
// the function wrote into its driver template (--service, --guard-label, --selector,
// --owner-reference), with a made-up Pod for the downward-API values.
func sidecarTarget(t *testing.T, built []byte, app string) binder.Target {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(built), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.GetKind() != "SparkApplication" || n.GetName() != app {
			continue
		}
		inits, err := n.Pipe(kyaml.Lookup("spec", "driver", "template", "spec", "initContainers"))
		if err != nil || inits == nil {
			t.Fatalf("%s has no driver initContainers (%v)", app, err)
		}
		var containers []struct {
			Name string   `json:"name"`
			Args []string `json:"args"`
		}
		raw, _ := inits.MarshalJSON()
		if err := json.Unmarshal(raw, &containers); err != nil {
			t.Fatal(err)
		}
		for _, ct := range containers {
			if ct.Name != "sparkui-runtime" {
				continue
			}
			const appID = "spark-0f1e2d3c4b5a69788796a5b4c3d2e1f0"
			tg := binder.Target{Namespace: "spark-jobs", PortName: "spark-ui", AppID: appID,
				PodName: app + "-driver", PodUID: "5b0e6c1a-3f2d-4e8b-9a71-0c2d4e6f8a1b", Selector: map[string]string{}}
			for _, a := range ct.Args {
				k, v, _ := strings.Cut(a, "=")
				switch k {
				case "--service":
					tg.Service = v
				case "--guard-label":
					tg.GuardKey, tg.GuardValue, _ = strings.Cut(v, "=")
				case "--owner-reference":
					tg.NoOwner = v == "false"
				case "--selector":
					for _, kv := range strings.Split(strings.ReplaceAll(v, "$(SPARKUI_APP_ID)", appID), ",") {
						sk, sv, _ := strings.Cut(kv, "=")
						tg.Selector[sk] = sv
					}
				}
			}
			if tg.Service == "" || tg.GuardKey == "" || len(tg.Selector) == 0 {
				t.Fatalf("%s's runtime args %v lack --service, --guard-label or --selector", app, ct.Args)
			}
			return tg
		}
	}
	t.Fatalf("no SparkApplication %s with a sparkui-runtime sidecar in Flux's build", app)
	return binder.Target{}
}
