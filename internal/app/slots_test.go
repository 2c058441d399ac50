package app

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/yamlx"
)

// slotPaths is the path each slot reports.
type slotPaths struct {
	PodSpec, InitContainers, Volumes, DriverContainer, PodLabels string
}

// TestEnsureSlots writes a marker into every slot and compares the whole object with what
// the operator needs; a second detection then finds every slot where it was written, and a
// second Ensure changes nothing.
func TestEnsureSlots(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		route Injection
		paths slotPaths
		want  string // the object after the writes
	}{{
		name: "kubeflow template injection creates the template",
		doc: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi}
spec:
  sparkVersion: 3.5.5
  driver:
    serviceAccount: spark # kept
`,
		paths: slotPaths{
			PodSpec: "spec.driver.template.spec", InitContainers: "spec.driver.template.spec.initContainers",
			Volumes: "spec.driver.template.spec.volumes", DriverContainer: "spec.driver.template.spec.containers[0]",
			PodLabels: "spec.driver.template.metadata.labels",
		},
		want: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi}
spec:
  sparkVersion: 3.5.5
  driver:
    serviceAccount: spark # kept
    template:
      spec:
        initContainers:
        - name: marker
        volumes:
        - name: marker
        containers:
        - name: spark-kubernetes-driver
          marker: "true"
      metadata:
        labels:
          marker: "true"
`,
	}, {
		name: "kubeflow template injection keeps the user's driver container",
		doc: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: ScheduledSparkApplication
metadata: {name: pi}
spec:
  template:
    driver:
      template:
        spec:
          containers:
          - name: log-shipper
          - name: spark-kubernetes-driver
`,
		paths: slotPaths{
			PodSpec: "spec.template.driver.template.spec", InitContainers: "spec.template.driver.template.spec.initContainers",
			Volumes: "spec.template.driver.template.spec.volumes", DriverContainer: "spec.template.driver.template.spec.containers[1]",
			PodLabels: "spec.template.driver.template.metadata.labels",
		},
		want: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: ScheduledSparkApplication
metadata: {name: pi}
spec:
  template:
    driver:
      template:
        spec:
          containers:
          - name: log-shipper
          - name: spark-kubernetes-driver
            marker: "true"
          initContainers:
          - name: marker
          volumes:
          - name: marker
        metadata:
          labels:
            marker: "true"
`,
	}, {
		name:  "kubeflow webhook injection",
		route: InjectWebhook,
		doc: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi}
spec:
  volumes:
  - name: scratch
    emptyDir: {}
  driver:
    labels: {team: a}
`,
		paths: slotPaths{
			InitContainers: "spec.driver.initContainers", Volumes: "spec.volumes",
			DriverContainer: "spec.driver", PodLabels: "spec.driver.labels",
		},
		want: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi}
spec:
  volumes:
  - name: scratch
    emptyDir: {}
  - name: marker
  driver:
    labels: {team: a, marker: "true"}
    initContainers:
    - name: marker
    marker: "true"
`,
	}, {
		name: "apache creates the podTemplateSpec",
		doc: `apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata: {name: pi}
spec:
  sparkConf: {spark.ui.port: "4040"}
`,
		paths: slotPaths{
			PodSpec: "spec.driverSpec.podTemplateSpec.spec", InitContainers: "spec.driverSpec.podTemplateSpec.spec.initContainers",
			Volumes: "spec.driverSpec.podTemplateSpec.spec.volumes", DriverContainer: "spec.driverSpec.podTemplateSpec.spec.containers[0]",
			PodLabels: "spec.driverSpec.podTemplateSpec.metadata.labels",
		},
		want: `apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata: {name: pi}
spec:
  sparkConf: {spark.ui.port: "4040"}
  driverSpec:
    podTemplateSpec:
      spec:
        initContainers:
        - name: marker
        volumes:
        - name: marker
        containers:
        - name: spark-kubernetes-driver
          marker: "true"
      metadata:
        labels:
          marker: "true"
`,
	}, {
		name: "apache driver container named by the conf",
		doc: `apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata: {name: pi}
spec:
  sparkConf: {spark.kubernetes.driver.podTemplateContainerName: main}
  driverSpec:
    podTemplateSpec:
      spec:
        containers: [{name: proxy}, {name: main}]
`,
		paths: slotPaths{
			PodSpec: "spec.driverSpec.podTemplateSpec.spec", InitContainers: "spec.driverSpec.podTemplateSpec.spec.initContainers",
			Volumes: "spec.driverSpec.podTemplateSpec.spec.volumes", DriverContainer: "spec.driverSpec.podTemplateSpec.spec.containers[1]",
			PodLabels: "spec.driverSpec.podTemplateSpec.metadata.labels",
		},
		want: `apiVersion: spark.apache.org/v1
kind: SparkApplication
metadata: {name: pi}
spec:
  sparkConf: {spark.kubernetes.driver.podTemplateContainerName: main}
  driverSpec:
    podTemplateSpec:
      spec:
        containers: [{name: proxy}, {name: main, marker: "true"}]
        initContainers:
        - name: marker
        volumes:
        - name: marker
      metadata:
        labels:
          marker: "true"
`,
	}, {
		name: "cronjob pod template, null fields replaced",
		doc: `apiVersion: batch/v1
kind: CronJob
metadata: {name: r}
spec:
  jobTemplate:
    spec:
      template:
        metadata:
          labels: {spark-role: driver}
        spec:
          initContainers: null
          containers:
          - name: report
`,
		paths: slotPaths{
			PodSpec: "spec.jobTemplate.spec.template.spec", InitContainers: "spec.jobTemplate.spec.template.spec.initContainers",
			Volumes: "spec.jobTemplate.spec.template.spec.volumes", DriverContainer: "spec.jobTemplate.spec.template.spec.containers[0]",
			PodLabels: "spec.jobTemplate.spec.template.metadata.labels",
		},
		want: `apiVersion: batch/v1
kind: CronJob
metadata: {name: r}
spec:
  jobTemplate:
    spec:
      template:
        metadata:
          labels: {spark-role: driver, marker: "true"}
        spec:
          initContainers:
          - name: marker
          containers:
          - name: report
            marker: "true"
          volumes:
          - name: marker
`,
	}}
	slots := []Slot{SlotInitContainers, SlotVolumes, SlotDriverContainer, SlotPodLabels}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := CarrierOptions{KubeflowInjection: tc.route}
			c := detectOne(t, readObjects(t, tc.doc), opts)
			got := slotPaths{}
			write := func(c *Carrier) {
				for _, s := range slots {
					n, path, err := c.Ensure(s)
					if err != nil {
						t.Fatalf("Ensure(%d): %v", s, err)
					}
					switch s {
					case SlotInitContainers:
						got.InitContainers = path
						addNamed(n, "marker")
					case SlotVolumes:
						got.Volumes = path
						addNamed(n, "marker")
					case SlotDriverContainer:
						got.DriverContainer = path
						yamlx.SetIfChanged(n, "marker", yamlx.NewStr("true"))
					case SlotPodLabels:
						got.PodLabels = path
						yamlx.SetIfChanged(n, "marker", yamlx.NewStr("true"))
					}
				}
				_, got.PodSpec, _ = c.Lookup(SlotPodSpec)
			}
			write(c)
			if diff := cmp.Diff(tc.paths, got); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
			out := c.Object.MustString()
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("object (-want +got):\n%s", diff)
			}
			// What was written is where a new detection looks.
			c2 := detectOne(t, readObjects(t, out), opts)
			for _, s := range slots {
				if n, _, err := c2.Lookup(s); n == nil || err != nil {
					t.Errorf("after writing, Lookup(%d) = %v, %v", s, n, err)
				}
			}
			write(c2)
			if again := c2.Object.MustString(); again != out {
				t.Errorf("second Ensure changed the object:\n%s", again)
			}
		})
	}
}

// addNamed appends {name: name} to a sequence unless an element has that name.
func addNamed(seq *yaml.Node, name string) {
	for _, e := range seq.Content {
		if yamlx.GetStr(e, "name") == name {
			return
		}
	}
	seq.Content = append(seq.Content, yamlx.NewMap("name", name))
}

func TestLookupDoesNotCreate(t *testing.T) {
	for _, file := range []string{"kubeflow-sparkapplication.yaml", "apache-v1.yaml"} {
		objs := fixture(t, file)
		before := objs[0].MustString()
		c := detectOne(t, objs, CarrierOptions{})
		for _, s := range []Slot{SlotPodSpec, SlotInitContainers, SlotVolumes, SlotDriverContainer, SlotPodLabels} {
			n, path, err := c.Lookup(s)
			if n != nil || err != nil || path == "" {
				t.Errorf("%s: Lookup(%d) = %v, %q, %v; want nil with a path", file, s, n, path, err)
			}
		}
		if after := c.Object.MustString(); after != before {
			t.Errorf("%s: Lookup changed the object:\n%s", file, after)
		}
	}
}

func TestWebhookRouteHasNoPodSpec(t *testing.T) {
	c := detectOne(t, fixture(t, "kubeflow-sparkapplication.yaml"), CarrierOptions{KubeflowInjection: InjectWebhook})
	for _, f := range []func(Slot) (*yaml.Node, string, error){c.Lookup, c.Ensure} {
		if _, _, err := f(SlotPodSpec); !errors.Is(err, ErrNoPodSpec) {
			t.Errorf("SlotPodSpec on the webhook injection: %v, want ErrNoPodSpec", err)
		}
	}
	// The existing spec.volumes (with the driver's mount) is the volumes slot.
	n, path, err := c.Lookup(SlotVolumes)
	if err != nil || path != "spec.volumes" || len(n.Content) != 1 || yamlx.GetStr(n.Content[0], "name") != "scratch" {
		t.Errorf("Lookup(SlotVolumes) = %v, %q, %v", n, path, err)
	}
}

func TestEnsureWorkloadWithoutContainer(t *testing.T) {
	doc := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\n" +
		"spec: {template: {metadata: {labels: {spark-role: driver}}, spec: {restartPolicy: Never}}}\n"
	c := detectOne(t, readObjects(t, doc), CarrierOptions{})
	_, _, err := c.Ensure(SlotDriverContainer)
	want := "Job ns/j: spec.template.spec.containers: has no container to run the driver in"
	if err == nil || err.Error() != want {
		t.Errorf("Ensure(SlotDriverContainer) = %v, want %s", err, want)
	}
	if strings.Contains(c.Object.MustString(), "containers") {
		t.Errorf("the failed Ensure wrote a container:\n%s", c.Object.MustString())
	}
}
