package blackbox

// credential_test.go: a UI behind Spark's JWSFilter (spark.ui.filters) with the runtime's
// credential configured in the functionConfig (spec.runtime.auth.bearerTokenSecret): the
// function wires a Secret volume and --auth-bearer-file; the runtime binds with it and never
// without it (docs/configuration.md, runtime.auth).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

const credentialInput = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: sparkui.dev/v1alpha1
  kind: SparkUIService
  metadata:
    name: sparkui
  spec:
    runtime:
      auth:
        bearerTokenSecret:
          name: spark-ui-jws
          key: token
    sparkConf:
      spark.ui.port: "0"
      spark.ui.filters: org.apache.spark.ui.JWSFilter
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: filtered-driver
    namespace: NS
    labels:
      spark-app-selector: APPID
      spark-role: driver
  spec:
    nodeName: NS-node
    serviceAccountName: spark
    hostNetwork: true
    containers:
    - name: spark-kubernetes-driver
      image: apache/spark:4.1.0
- apiVersion: v1
  kind: ServiceAccount
  metadata:
    name: spark
    namespace: NS
`

func TestFilteredUIBindsWithTheWiredCredentialOnly(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	appID := "spark-" + ns
	admin := c.KubeconfigFile(t, c.Config)
	const svc, token = "filtered-ui-svc", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzcGFya3VpIn0.c2lnbmF0dXJl"

	r := renderList(t, strings.NewReplacer("NS", ns, "APPID", appID).Replace(credentialInput))
	// The function's wiring, exactly.
	wantFile := sidecar.AuthMountPath + "/" + sidecar.AuthBearerFileName
	if got := strings.Join(r.args, " "); !strings.HasSuffix(got, " --ui-filters=org.apache.spark.ui.JWSFilter --auth-bearer-file="+wantFile) {
		t.Fatalf("runtime args %s, want them to end with --ui-filters and --auth-bearer-file=%s", got, wantFile)
	}
	if strings.Contains(r.results, "SUI024") {
		t.Errorf("SUI024 although the credential is wired:\n%s", r.results)
	}
	var volume, mount string
	for _, it := range r.items {
		if it.GetKind() != "Pod" {
			continue
		}
		v, err := it.Pipe(yaml.Lookup("spec", "volumes", "[name="+sidecar.AuthVolumeName+"]"))
		if err != nil || v == nil {
			t.Fatalf("no volume %s: %v", sidecar.AuthVolumeName, err)
		}
		volume = v.MustString()
		m, err := it.Pipe(yaml.Lookup("spec", "initContainers", "[name="+sidecar.ContainerName+"]", "volumeMounts", "[name="+sidecar.AuthVolumeName+"]"))
		if err != nil || m == nil {
			t.Fatalf("no mount of %s in the runtime: %v", sidecar.AuthVolumeName, err)
		}
		mount = m.MustString()
		if d, _ := it.Pipe(yaml.Lookup("spec", "containers", "[name="+names.DriverContainer+"]", "volumeMounts", "[name="+sidecar.AuthVolumeName+"]")); d != nil {
			t.Errorf("the driver container mounts the credential too: %s", d.MustString())
		}
	}
	if want := "name: sparkui-runtime-auth\nsecret:\n  secretName: spark-ui-jws\n  items:\n  - key: token\n    path: bearer-token\n"; volume != want {
		t.Errorf("volume:\n%s\nwant:\n%s", volume, want)
	}
	if want := "name: sparkui-runtime-auth\nmountPath: /var/run/sparkui/auth\nreadOnly: true\n"; mount != want {
		t.Errorf("mount:\n%s\nwant:\n%s", mount, want)
	}

	addNode(t, c, ns+"-node")
	if _, err := c.Client.CoreV1().Secrets(ns).Create(testcluster.Context(t, 10*time.Second), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "spark-ui-jws", Namespace: ns},
		Data:       map[string][]byte{"token": []byte(token)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubectl(t, admin, r.stream, "apply", "-f", "-")
	pod := podReady(t, c, ns, "filtered-driver", "192.0.2.51")

	// The kubelet's part: project the Secret's key as the volume says, under a local directory
	// standing for the mount path.
	sec, err := c.Client.CoreV1().Secrets(ns).Get(testcluster.Context(t, 10*time.Second), "spark-ui-jws", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mountDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(mountDir, sidecar.AuthBearerFileName), sec.Data["token"], 0o444); err != nil {
		t.Fatal(err)
	}
	localArgs := func(withCredential bool) []string {
		var out []string
		for _, a := range r.args {
			if strings.HasPrefix(a, "--auth-bearer-file=") {
				if !withCredential {
					continue
				}
				a = strings.Replace(a, sidecar.AuthMountPath, mountDir, 1)
			}
			out = append(out, a)
		}
		return out
	}

	ui, err := fakespark.Start(fakespark.Options{AppID: appID, PodName: pod.Name, Namespace: ns, State: fakespark.Ready,
		Filter: fakespark.JWS, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer ui.Close()

	// Without the credential: refused (403), named, never bound.
	p, _ := startRuntime(t, c, pod, localArgs(false))
	testcluster.WaitFor(t, 20*time.Second, "the runtime to log the filter's refusal", func() (bool, string) {
		return strings.Contains(p.logs(), "org.apache.spark.ui.JWSFilter"), p.logs()
	})
	time.Sleep(2 * time.Second)
	if got := service(t, c, ns, svc); len(got.selector) != 0 {
		t.Fatalf("bound without the credential: %s\n%s", got, p.logs())
	}
	_ = p.cmd.Process.Kill()
	<-p.done

	// With the credential the function wired: bound to the UI's port.
	p, _ = startRuntime(t, c, pod, localArgs(true))
	bound := svcState{selector: map[string]string{names.LabelAppSelector: appID, names.LabelSparkRole: names.RoleDriver}, targetPort: fmt.Sprint(ui.Port)}
	testcluster.WaitFor(t, 20*time.Second, "the bind with the credential", func() (bool, string) {
		got := service(t, c, ns, svc)
		return got.String() == bound.String(), got.String() + "\n" + p.logs()
	})
	waitEndpoints(t, c, ns, svc, []string{fmt.Sprintf("192.0.2.51:%d ready=true", ui.Port)})
}

// TestCarrierCredentialFromSecretVolume: on a carrier that is not a spark-submit Pod (the
// notebook StatefulSet, client mode, its UI behind Spark's JWSFilter), the credential reaches
// the runtime only through the Secret volume the function writes into the pod template. The
// function renders the StatefulSet with spec.runtime.auth; the driver Pod is built from its
// template as the StatefulSet controller does and created (the API server refuses a Pod whose
// mount has no volume); the runtime runs as the kubelet runs it, the Secret projected where the
// volume says. With a wrong token in the Secret the filter refuses it and it never binds; once
// the Secret holds the token the filter accepts (the kubelet re-projects the volume), it binds:
// the token it sends is the one it read from the mounted file.
func TestCarrierCredentialFromSecretVolume(t *testing.T) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	const token, wrong = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJub3RlYm9vayJ9.c2lnbmF0dXJl", "not-the-filter-token"
	r, carrier := renderCarrier(t, "carrier-statefulset", ns, func(t *testing.T, in string) string {
		const conf, head = "      spark.port.maxRetries      4\n", "kind: ResourceList\n"
		if strings.Count(in, conf) != 1 || strings.Count(in, head) != 1 || strings.Contains(in, "functionConfig") {
			t.Fatal("the StatefulSet input changed: update the edit")
		}
		in = strings.Replace(in, conf, conf+"      spark.ui.filters           org.apache.spark.ui.JWSFilter\n", 1)
		return strings.Replace(in, head, head+"functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: sparkui}\n  data:\n    authBearerSecret: spark-ui-jws/token\n", 1)
	}, false)
	for _, rule := range []string{"SUI009", "SUI024"} {
		if strings.Contains(r.results, "["+rule+"]") {
			t.Fatalf("%s reported although the credential is wired:\n%s", rule, r.results)
		}
	}
	svc := applySparkui(t, c, ns, r)
	secrets := c.Client.CoreV1().Secrets(ns)
	sec, err := secrets.Create(testcluster.Context(t, 10*time.Second), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "spark-ui-jws", Namespace: ns},
		Data:       map[string][]byte{"token": []byte(wrong)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node := ns + "-node"
	addNode(t, c, node)
	pod, ui := workloadDriver(t, carrier, 1)
	ui.JWSToken = token
	pod.Namespace, pod.Spec.NodeName = ns, node
	var vol *corev1.SecretVolumeSource
	for _, v := range pod.Spec.Volumes {
		if v.Name == sidecar.AuthVolumeName {
			vol = v.Secret
		}
	}
	if vol == nil || vol.SecretName != "spark-ui-jws" {
		t.Fatalf("the StatefulSet's pod template has no Secret volume %s: %+v", sidecar.AuthVolumeName, pod.Spec.Volumes)
	}
	created, err := c.Client.CoreV1().Pods(ns).Create(testcluster.Context(t, 10*time.Second), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the driver Pod as the StatefulSet controller builds it: %v", err)
	}
	d := podReady(t, c, ns, created.Name, fmt.Sprintf("10.244.%d.50", len(ns)%200))
	p, _, uiPort := startPodRuntime(t, c, d, ui)
	tokenFile := ""
	for _, a := range p.cmd.Args {
		if v, ok := strings.CutPrefix(a, "--auth-bearer-file="); ok {
			tokenFile = v
		}
	}
	if tokenFile == "" || filepath.Base(tokenFile) != sidecar.AuthBearerFileName {
		t.Fatalf("the runtime was given no --auth-bearer-file in the projected volume: %v", p.cmd.Args)
	}

	// The Secret's token is not the filter's: refused, named, never bound.
	testcluster.WaitFor(t, 30*time.Second, "the runtime to log the filter's refusal", func() (bool, string) {
		return strings.Contains(p.logs(), "org.apache.spark.ui.JWSFilter"), p.logs()
	})
	time.Sleep(2 * time.Second)
	if got := service(t, c, ns, svc); len(got.selector) != 0 {
		t.Fatalf("bound with the wrong token: %s\n%s", got, p.logs())
	}

	// The Secret updated, the kubelet swaps the projection: the runtime reads the new token.
	sec.Data["token"] = []byte(token)
	if _, err := secrets.Update(testcluster.Context(t, 10*time.Second), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	projectSecret(t, c, ns, *vol, filepath.Dir(tokenFile))
	bound := svcState{selector: map[string]string{stsPodName: d.Name, labelAppID: carrier.GetName(), names.LabelSparkRole: names.RoleDriver},
		targetPort: fmt.Sprint(uiPort)}
	testcluster.WaitFor(t, 30*time.Second, "the bind with the token read from the volume", func() (bool, string) {
		got := service(t, c, ns, svc)
		return got.String() == bound.String(), got.String() + "\n" + p.logs()
	})
	waitEndpoints(t, c, ns, svc, []string{fmt.Sprintf("%s:%d ready=true", d.Status.PodIP, uiPort)})
}
