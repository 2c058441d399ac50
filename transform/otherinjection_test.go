package transform

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
)

// TestRemoveOtherInjectionKeepsTheUsers: only sparkui's entries leave the route not in use; the
// user's init containers, volumes, mounts, hooks and labels stay, and so does a template
// the user wrote (nothing of sparkui's in it, or more than its name left in the container).
func TestRemoveOtherInjectionKeepsTheUsers(t *testing.T) {
	const ours = `[/opt/sparkui/sparkui-runtime, withdraw, --socket=/opt/sparkui/runtime.sock, --timeout=10s]`
	cases := []struct {
		name    string
		route   app.Injection
		in, out string
		removed bool
	}{{
		name:  "template injection: webhook copies go, the user's stay",
		route: app.InjectTemplate,
		in: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi}
spec:
  volumes: [{name: scratch, emptyDir: {}}, {name: sparkui-runtime, emptyDir: {}}, {name: sparkui-runtime-auth, secret: {secretName: s}}]
  driver:
    labels: {team: a, sparkui.dev/application: pi}
    initContainers: [{name: user-init}, {name: sparkui-runtime}]
    volumeMounts: [{name: scratch, mountPath: /s}, {name: sparkui-runtime, mountPath: /opt/sparkui}]
    lifecycle: {preStop: {exec: {command: ` + ours + `}}, postStart: {exec: {command: [date]}}}
`,
		out: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi}
spec:
  volumes: [{name: scratch, emptyDir: {}}]
  driver:
    labels: {team: a}
    initContainers: [{name: user-init}]
    volumeMounts: [{name: scratch, mountPath: /s}]
    lifecycle: {postStart: {exec: {command: [date]}}}
`,
		removed: true,
	}, {
		name:  "template injection: a user preStop and another application's label stay",
		route: app.InjectTemplate,
		in: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi}
spec:
  driver:
    labels: {sparkui.dev/application: other}
    lifecycle: {preStop: {exec: {command: [sleep, "5"]}}}
`,
	}, {
		name:  "webhook injection: template copies go, the user's template stays",
		route: app.InjectWebhook,
		in: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: ScheduledSparkApplication
metadata: {name: pi}
spec:
  template:
    driver:
      template:
        metadata: {labels: {sparkui.dev/application: pi, team: a}}
        spec:
          initContainers: [{name: sparkui-runtime}, {name: user-init}]
          volumes: [{name: sparkui-runtime, emptyDir: {}}]
          containers:
          - name: spark-kubernetes-driver
            env: [{name: A, value: b}]
            volumeMounts: [{name: sparkui-runtime, mountPath: /opt/sparkui}]
            lifecycle: {preStop: {exec: {command: ` + ours + `}}}
`,
		out: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: ScheduledSparkApplication
metadata: {name: pi}
spec:
  template:
    driver:
      template:
        metadata: {labels: {team: a}}
        spec:
          initContainers: [{name: user-init}]
          containers:
          - name: spark-kubernetes-driver
            env: [{name: A, value: b}]
`,
		removed: true,
	}, {
		name:  "webhook injection: a template without sparkui's additions is left as written",
		route: app.InjectWebhook,
		in: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi}
spec:
  driver:
    template:
      metadata: {}
      spec:
        containers: [{name: spark-kubernetes-driver}]
`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := readObjects(t, tc.in)
			c, err := app.DetectCarrier(objs[0], app.CarrierOptions{KubeflowInjection: tc.route})
			if err != nil || c == nil {
				t.Fatalf("DetectCarrier = %v, %v", c, err)
			}
			if got := RemoveOtherInjection(c); got != tc.removed {
				t.Errorf("RemoveOtherInjection() = %v, want %v", got, tc.removed)
			}
			want := tc.out
			if want == "" {
				want = tc.in
			}
			got, err := objs[0].String()
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(readString(t, want), got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func readString(t *testing.T, src string) string {
	t.Helper()
	s, err := readObjects(t, src)[0].String()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readObjects(t *testing.T, src string) []*yaml.RNode {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: strings.NewReader(src), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	return items
}
