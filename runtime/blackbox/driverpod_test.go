package blackbox

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

func lookup(t *testing.T, n *yaml.RNode, path ...string) *yaml.RNode {
	t.Helper()
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func str(t *testing.T, n *yaml.RNode, path ...string) string {
	if v := lookup(t, n, path...); v != nil {
		return yaml.GetValue(v)
	}
	return ""
}

// decode converts the node at path (absent: nothing) into out, a typed API object.
func decode(t *testing.T, n *yaml.RNode, out any, path ...string) {
	t.Helper()
	v := lookup(t, n, path...)
	if v == nil {
		return
	}
	b, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v", strings.Join(path, "."), err)
	}
}

func stringMap(t *testing.T, n *yaml.RNode, path ...string) map[string]string {
	m := map[string]string{}
	decode(t, n, &m, path...)
	return m
}

func merge(dst map[string]string, srcs ...map[string]string) map[string]string {
	if dst == nil {
		dst = map[string]string{}
	}
	for _, s := range srcs {
		for k, v := range s {
			dst[k] = v
		}
	}
	return dst
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// sparkContainer picks the container Spark makes the driver's, as
// KubernetesUtils.selectSparkContainer does: the one named name, else the first, else a new
// one; it returns its index.
func sparkContainer(spec *corev1.PodSpec, name string) int {
	for i, c := range spec.Containers {
		if name != "" && c.Name == name {
			return i
		}
	}
	if len(spec.Containers) == 0 {
		spec.Containers = []corev1.Container{{}}
	}
	return 0
}

// sparkDriver does what Spark's BasicDriverFeatureStep and DriverKubernetesCredentialsFeatureStep
// do to the template (editOrNewSpec: the template's containers, init containers, volumes and
// labels are kept): the container's name (spark-kubernetes-driver when it has none), image and
// ports (driver RPC, block manager, UI), the ServiceAccount, restartPolicy Never, the Pod's
// name, and Spark's labels spark-app-selector=<app id> and spark-role=driver on top of the
// template's and the conf's (spark.kubernetes.driver.label.*). Spark's conf volume and env
// are left out: nothing of the runtime's depends on them.
func sparkDriver(pod *corev1.Pod, idx int, image, serviceAccount string, uiPort int, appID string, confLabels map[string]string) {
	c := &pod.Spec.Containers[idx]
	if c.Name == "" {
		c.Name = names.DriverContainer
	}
	if c.Image == "" {
		c.Image = image
	}
	c.Args = []string{"driver", "--properties-file", "/opt/spark/conf/spark.properties"}
	c.Ports = append(c.Ports,
		corev1.ContainerPort{Name: "driver-rpc-port", ContainerPort: 7078, Protocol: corev1.ProtocolTCP},
		corev1.ContainerPort{Name: "blockmanager", ContainerPort: 7079, Protocol: corev1.ProtocolTCP},
		corev1.ContainerPort{Name: "spark-ui", ContainerPort: int32(uiPort), Protocol: corev1.ProtocolTCP})
	if serviceAccount != "" {
		pod.Spec.ServiceAccountName = serviceAccount
	}
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Labels = merge(pod.Labels, confLabels, map[string]string{names.LabelAppSelector: appID, names.LabelSparkRole: names.RoleDriver})
}

func confPort(t *testing.T, conf *yaml.RNode) int {
	if p := str(t, conf, "spark.ui.port"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return 4040
}

// createBuiltPod creates the driver Pod an operator or controller would build for run, with
// the cluster's PriorityClass its template names.
func createBuiltPod(t *testing.T, c *testcluster.Cluster, ns string, pod *corev1.Pod, run int) *corev1.Pod {
	t.Helper()
	if pc := pod.Spec.PriorityClassName; pc != "" {
		_, err := c.Client.SchedulingV1().PriorityClasses().Create(testcluster.Context(t, 10*time.Second),
			&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: pc}, Value: 100}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	created, err := c.Client.CoreV1().Pods(ns).Create(testcluster.Context(t, 10*time.Second), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("run %d: the driver Pod as built: %v", run, err)
	}
	return created
}
