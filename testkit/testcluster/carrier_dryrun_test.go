package testcluster_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/transform"
)

// sidecar is shaped like what the function will add: a native sidecar with downward-API
// env, a hardened securityContext, small resources and a socket volume mount.
const sidecarContainer = `name: sparkui-runtime
image: ghcr.io/sparkui/sparkui-runtime:0.0.0
restartPolicy: Always
env:
- name: POD_NAME
  valueFrom: {fieldRef: {fieldPath: metadata.name}}
- name: POD_UID
  valueFrom: {fieldRef: {fieldPath: metadata.uid}}
securityContext:
  runAsNonRoot: true
  readOnlyRootFilesystem: true
  allowPrivilegeEscalation: false
  capabilities: {drop: [ALL]}
  seccompProfile: {type: RuntimeDefault}
resources:
  requests: {cpu: 10m, memory: 16Mi}
  limits: {memory: 32Mi}
volumeMounts:
- name: sparkui-run
  mountPath: /run/sparkui
`

func node(t *testing.T, src string) *yaml.Node {
	t.Helper()
	rn, err := yaml.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	return rn.YNode()
}

// TestDryRunCarrierWrites writes into every slot of every carrier fixture what the function
// will (sidecar, volume, the driver's mount and preStop hook, the identity label; the Apache
// container name pinned), on both kubeflow injections, and submits the result to a server-side
// dry run with strict field validation: every place a carrier writes is valid in the
// operators' schemas, v1beta1 included.
func TestDryRunCarrierWrites(t *testing.T) {
	c := testcluster.Shared(t, testcluster.Options{CRDDirectoryPaths: []string{"../../testdata/assets/crds", "../../testdata/assets/crds-stackable"}})
	files, err := filepath.Glob("../../testdata/assets/carriers/*.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("carrier fixtures: %v, %v", files, err)
	}
	kinds := map[app.CarrierKind]int{}
	for _, f := range files {
		for _, route := range []app.Injection{app.InjectTemplate, app.InjectWebhook} {
			objs, err := kio.FromBytes(mustRead(t, f))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				car, err := app.DetectCarrier(o, app.CarrierOptions{KubeflowInjection: route})
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if car == nil || (route == app.InjectWebhook && car.Kind != app.KindKubeflow) {
					continue
				}
				kinds[car.Kind]++
				write(t, car)
				if err := c.DryRunCreateYAML(testcluster.Context(t, 60*time.Second), []byte(o.MustString())); err != nil {
					t.Errorf("%s (%s route) rewritten, rejected: %v\n%s", filepath.Base(f), route, err, o.MustString())
				}
			}
		}
	}
	// 3 kubeflow fixtures' worth of routes: 2 fixtures × 2 routes; 3 Apache; 4 workloads and
	// the SparkConnect; 1 Stackable.
	if kinds[app.KindKubeflow] != 4 || kinds[app.KindApache] != 3 || kinds[app.KindWorkload] != 5 || kinds[app.KindStackable] != 1 {
		t.Errorf("carriers written: %v", kinds)
	}
}

func write(t *testing.T, car *app.Carrier) {
	t.Helper()
	ensure := func(s app.Slot) *yaml.Node {
		n, path, err := car.Ensure(s)
		if err != nil {
			t.Fatalf("%s: Ensure(%d) at %s: %v", car.Name, s, path, err)
		}
		return n
	}
	inits := ensure(app.SlotInitContainers)
	inits.Content = append(inits.Content, node(t, sidecarContainer))
	vols := ensure(app.SlotVolumes)
	vols.Content = append(vols.Content, node(t, "name: sparkui-run\nemptyDir: {medium: Memory, sizeLimit: 1Mi}\n"))
	labels := ensure(app.SlotPodLabels)
	for k, v := range car.IdentityLabels() {
		yamlx.Set(labels, k, yamlx.NewStr(v))
	}
	if car.OperatorOwnsLifecycle() {
		return // sparkui writes nothing into the driver container (transform: the carrier whose operator owns the lifecycle)
	}
	drv := ensure(app.SlotDriverContainer)
	// The webhook adds a volume only if the driver mounts it: mount it there on every route.
	mounts := yamlx.EnsureSeq(drv, "volumeMounts")
	mounts.Content = append(mounts.Content, node(t, "name: sparkui-run\nmountPath: /run/sparkui\n"))
	yamlx.Set(drv, "lifecycle", yamlx.NewMap("preStop", yamlx.NewMap("exec", yamlx.NewMap("command", sidecar.PreStopCommand()))))
	if _, err := transform.PinDriverContainer(car); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDryRunStackableRewritten: the Stackable SparkApplications sparkui-fn writes (the goldens
// testdata/carrier-stackable*/expected.yaml, which TestGolden holds to the function's output)
// and everything added next to them pass a strict server-side dry run with a CRD written from
// the operator's facts (testdata/assets/crds-stackable/SOURCE). podOverrides preserves
// unknown fields, as upstream: the driver Pod built from it is created for real in
// runtime/blackbox (TestCarrierStackable*).
func TestDryRunStackableRewritten(t *testing.T) {
	c := testcluster.Shared(t, testcluster.Options{CRDDirectoryPaths: []string{"../../testdata/assets/crds", "../../testdata/assets/crds-stackable"}})
	for _, dir := range []string{"carrier-stackable", "carrier-stackable-overrides"} {
		rl, err := yaml.Parse(string(mustRead(t, filepath.Join("../../testdata", dir, "expected.yaml"))))
		if err != nil {
			t.Fatal(err)
		}
		items, err := rl.Pipe(yaml.Lookup("items"))
		if err != nil || items == nil {
			t.Fatalf("%s: no items: %v", dir, err)
		}
		elems, _ := items.Elements()
		apps := 0
		for _, it := range elems {
			if it.GetApiVersion() == "spark.stackable.tech/v1alpha1" {
				apps++
			}
			if err := c.DryRunCreateYAML(testcluster.Context(t, 60*time.Second), []byte(it.MustString())); err != nil {
				t.Errorf("%s: %s %s rejected: %v\n%s", dir, it.GetKind(), it.GetName(), err, it.MustString())
			}
		}
		if apps != 1 || len(elems) != 4 {
			t.Errorf("%s: %d Stackable SparkApplications in %d items, want 1 in 4 (with the UI Service, Role, RoleBinding)", dir, apps, len(elems))
		}
	}
	// The CRD is strict where it declares fields: a misspelt driver field is refused, so the
	// dry run above would have caught sparkui writing beside podOverrides.
	bad := "apiVersion: spark.stackable.tech/v1alpha1\nkind: SparkApplication\nmetadata: {name: bad, namespace: default}\n" +
		"spec: {mode: cluster, mainApplicationFile: x.py, sparkImage: {productVersion: 3.5.6}, driver: {podOverride: {}}}\n"
	if err := c.DryRunCreateYAML(testcluster.Context(t, 60*time.Second), []byte(bad)); err == nil {
		t.Error("a SparkApplication with spec.driver.podOverride (misspelt) was accepted: the CRD checks nothing")
	}
}

// TestDryRunSparkConnectRewritten: the SparkConnects sparkui-fn writes (the goldens
// testdata/carrier-kubeflow-sparkconnect*/expected.yaml, which TestGolden holds to the
// function's output) and everything added next to them pass a strict server-side dry run
// with the SparkConnect CRD installed. The CRD keeps spec.server.template unchecked
// (preserve-unknown-fields), so the Pod the operator makes from it (its labels, annotations
// and spec: kubeflow/spark-operator internal/controller/sparkconnect/reconciler.go
// mutateServerPod, with its own labels and the server container's image) is dry-run too.
func TestDryRunSparkConnectRewritten(t *testing.T) {
	c := testcluster.Shared(t, testcluster.Options{CRDDirectoryPaths: []string{"../../testdata/assets/crds"}})
	for _, dir := range []string{"carrier-kubeflow-sparkconnect", "carrier-kubeflow-sparkconnect-service"} {
		rl, err := yaml.Parse(string(mustRead(t, filepath.Join("../../testdata", dir, "expected.yaml"))))
		if err != nil {
			t.Fatal(err)
		}
		items, err := rl.Pipe(yaml.Lookup("items"))
		if err != nil || items == nil {
			t.Fatalf("%s: no items: %v", dir, err)
		}
		elems, _ := items.Elements()
		connects := 0
		for _, it := range elems {
			docs := []*yaml.RNode{it}
			if it.GetKind() == "SparkConnect" {
				connects++
				docs = append(docs, connectPod(t, it))
			}
			for _, d := range docs {
				if err := c.DryRunCreateYAML(testcluster.Context(t, 60*time.Second), []byte(d.MustString())); err != nil {
					t.Errorf("%s: %s %s rejected: %v\n%s", dir, d.GetKind(), d.GetName(), err, d.MustString())
				}
			}
		}
		if connects != 1 {
			t.Errorf("%s: %d SparkConnects", dir, connects)
		}
	}
}

// connectPod is the Pod <name>-server made from a SparkConnect's spec.server.template, as far
// as the API server's validation goes: the template's labels, annotations and spec, the
// operator's labels over them, and the server container's image from spec.image.
func connectPod(t *testing.T, sc *yaml.RNode) *yaml.RNode {
	t.Helper()
	pod := yaml.MustParse("apiVersion: v1\nkind: Pod\nmetadata: {}\n")
	tmpl, err := sc.Pipe(yaml.Lookup("spec", "server", "template"))
	if err != nil || tmpl == nil {
		t.Fatalf("%s: no spec.server.template: %v", sc.GetName(), err)
	}
	pod.SetMapField(tmpl.Field("spec").Value.Copy(), "spec")
	if md := tmpl.Field("metadata"); md != nil {
		pod.SetMapField(md.Value.Copy(), "metadata")
	}
	labels := pod.GetLabels()
	labels["sparkoperator.k8s.io/launched-by-spark-operator"] = "true"
	labels["sparkoperator.k8s.io/connect-name"] = sc.GetName()
	labels["spark-role"] = "connect-server"
	if err := pod.SetLabels(labels); err != nil {
		t.Fatal(err)
	}
	if err := pod.SetName(sc.GetName() + "-server"); err != nil {
		t.Fatal(err)
	}
	if err := pod.SetNamespace(sc.GetNamespace()); err != nil {
		t.Fatal(err)
	}
	cs, _ := pod.Pipe(yaml.Lookup("spec", "containers"))
	elems, _ := cs.Elements()
	for _, ctr := range elems {
		if ctr.Field("image") == nil {
			if err := ctr.PipeE(yaml.SetField("image", yaml.NewScalarRNode("docker.io/apache/spark:4.0.1"))); err != nil {
				t.Fatal(err)
			}
		}
	}
	return pod
}
