package transform

import (
	"maps"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/yamlx"
)

func detect(t *testing.T, doc string) *app.Carrier {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: strings.NewReader(doc), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	c, err := app.DetectCarrier(items[0], app.CarrierOptions{})
	if err != nil || c == nil {
		t.Fatalf("DetectCarrier = %v, %v", c, err)
	}
	return c
}

func TestPinDriverContainer(t *testing.T) {
	tests := []struct {
		name, doc string
		changed   bool
		wantConf  string // the sparkConf line after, "" for none
	}{
		{"first container's name", "spec:\n  driverSpec: {podTemplateSpec: {spec: {containers: [{name: main}, {name: proxy}]}}}\n",
			true, "main"},
		{"nameless container", "spec:\n  sparkConf: {a: b}\n  driverSpec: {podTemplateSpec: {spec: {containers: [{image: x}]}}}\n",
			true, "spark-kubernetes-driver"},
		{"key already set", "spec:\n  sparkConf: {spark.kubernetes.driver.podTemplateContainerName: proxy}\n" +
			"  driverSpec: {podTemplateSpec: {spec: {containers: [{name: main}, {name: proxy}]}}}\n", false, "proxy"},
		{"no containers", "spec:\n  driverSpec: {podTemplateSpec: {spec: {priorityClassName: x}}}\n", false, ""},
		{"no template", "spec:\n  sparkConf: {a: b}\n", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := detect(t, "apiVersion: spark.apache.org/v1\nkind: SparkApplication\nmetadata: {name: pi}\n"+tc.doc)
			_, before, _ := c.Lookup(app.SlotDriverContainer)
			conf := maps.Clone(c.Conf)
			changed, err := PinDriverContainer(c)
			if err != nil || changed != tc.changed {
				t.Fatalf("PinDriverContainer = %t, %v; want %t", changed, err, tc.changed)
			}
			got := yamlx.GetStr(c.Object.YNode(), "spec", "sparkConf", app.KeyPodTemplateCtr)
			if got != tc.wantConf {
				t.Errorf("podTemplateContainerName = %q, want %q", got, tc.wantConf)
			}
			// The carrier's facts are what was read: pinning writes the object only.
			if !maps.Equal(c.Conf, conf) {
				t.Errorf("Conf after pinning = %v, want %v as read", c.Conf, conf)
			}
			if changed {
				// Spark then selects the container the key names, the first, which Lookup
				// already returned before the key was written.
				if _, path, err := c.Lookup(app.SlotDriverContainer); err != nil || path != "spec.driverSpec.podTemplateSpec.spec.containers[0]" || path != before {
					t.Errorf("driver container after pinning at %q, %v (before %q); want containers[0]", path, err, before)
				}
				again, err := PinDriverContainer(c)
				if again || err != nil {
					t.Errorf("second PinDriverContainer = %t, %v; want false", again, err)
				}
			}
		})
	}
	k := detect(t, "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: pi}\nspec: {driver: {template: {spec: {containers: [{name: main}]}}}}\n")
	if changed, err := PinDriverContainer(k); changed || err != nil {
		t.Errorf("PinDriverContainer on kubeflow = %t, %v; want false, nil", changed, err)
	}
}
