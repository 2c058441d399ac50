package blackbox

// credential_test.go: a UI behind Spark's JWSFilter (spark.ui.filters) with the runtime's
// credential configured in the functionConfig (spec.runtime.auth.bearerTokenSecret): the
// function wires a Secret volume and --auth-bearer-file; the runtime binds with it and never
// without it (issue 9 D).

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
	"github.com/sparkui/sparkui/internal/testcluster"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
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
