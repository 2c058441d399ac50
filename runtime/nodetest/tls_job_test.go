package nodetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

// The image's own spark-defaults.conf turns TLS on: a file sparkui never reads (it is in the
// image, not in the manifests). Only a driver started without --properties-file reads it
// (deploy/SparkSubmitArguments.scala mergeDefaultSparkProperties: Utils.getDefaultPropertiesFile
// when no properties file is given, or from 4.0 with --load-spark-defaults), so the driver here
// is examples/workloads' driver-only Job (`spark-submit --master local[4] … --conf
// spark.ui.port=4060`), whose image is the stand-in with that file at
// $SPARK_HOME/conf/spark-defaults.conf. A spark-submit cluster-mode Pod never reads it: its
// ConfigMap is mounted over $SPARK_CONF_DIR and it starts with --properties-file
// (docs/spark-conformance.md, "TLS on the real node").
const imageDefaultsRef = "docker.io/apache/spark:3.5.5"

// imageDefaultsConf is that file: java.util.Properties, as spark-defaults.conf.template writes
// it (key, blanks, value).
const imageDefaultsConf = "spark.ssl.enabled  true\n"

// imageDefaultsImage is the Job's image: the stand-in at Spark's paths with the defaults file.
func imageDefaultsImage(t *testing.T) testnode.Image {
	t.Helper()
	return testnode.Image{Ref: imageDefaultsRef, Name: "fakespark-ui", Binary: mustBuild(t, "./runtime/internal/fakespark/cmd/fakespark-ui"),
		Paths: standInPaths, Env: []string{"SPARK_HOME=/opt/spark"},
		Files: map[string]string{"/opt/spark/conf/spark-defaults.conf": imageDefaultsConf}}
}

// imageDefaultsStart renders examples/workloads/report-job.yaml as the carriers test does and
// creates it: the function, reading only the manifests, writes a plain-HTTP runtime for
// spark.ui.port 4060; the UI serves HTTPS on userPort(4060, 400) = 4460 and redirects on 4060.
// Test-only change: the driver's requests go (4 CPUs and 8 GiB do not fit the node).
func imageDefaultsStart(t *testing.T, n *testnode.Node) *tlsDriver {
	t.Helper()
	objs := renderFiles(t, "service: {type: ClusterIP}", "examples/workloads/report-job.yaml")
	d := &tlsDriver{tc: tlsCase{name: "imagedefaults", reason: "redirects to https://"}, uiPort: "4060", httpsPort: "4460"}
	var sa string
	for _, o := range objs {
		switch {
		case o.GetKind() == "Job":
			d.ns, d.job = o.GetNamespace(), o.GetName()
			editTemplate(t, o, func(spec *corev1.PodSpec) {
				spec.Containers[0].Resources = corev1.ResourceRequirements{}
				sa = spec.ServiceAccountName
				for _, c := range spec.InitContainers {
					if c.Name == "sparkui-runtime" && !strings.Contains(strings.Join(c.Args, " "), "--tls=false") {
						t.Errorf("the runtime's args %v: want --tls=false (the manifests say nothing of TLS)", c.Args)
					}
				}
			})
		case o.GetKind() == "Service" && strings.HasSuffix(o.GetName(), "-ui-svc"):
			d.svc = o.GetName()
		}
	}
	if d.job == "" || d.svc == "" || sa == "" {
		t.Fatalf("no Job, ServiceAccount or UI Service in the output")
	}
	n.PrepareNamespace(t, d.ns)
	_, err := n.Cluster.Client.CoreV1().ServiceAccounts(d.ns).Create(testcluster.Context(t, 10*time.Second),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(fmt.Errorf("ServiceAccount %s/%s: %w", d.ns, sa, err))
	}
	d.tl = watchService(t, n, d.ns, d.svc)
	d.applied = time.Now()
	create(t, n, objs)
	return d
}
