package transform

import (
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
			changed, err := PinDriverContainer(c)
			if err != nil || changed != tc.changed {
				t.Fatalf("PinDriverContainer = %t, %v; want %t", changed, err, tc.changed)
			}
			got := yamlx.GetStr(c.Object.YNode(), "spec", "sparkConf", app.KeyPodTemplateCtr)
			if got != tc.wantConf || c.Conf[app.KeyPodTemplateCtr] != tc.wantConf {
				t.Errorf("podTemplateContainerName = %q (Conf %q), want %q", got, c.Conf[app.KeyPodTemplateCtr], tc.wantConf)
			}
			if changed {
				// Spark then selects the container the key names: the one Lookup returns.
				if _, path, err := c.Lookup(app.SlotDriverContainer); err != nil || path != "spec.driverSpec.podTemplateSpec.spec.containers[0]" {
					t.Errorf("driver container after pinning at %q, %v; want containers[0]", path, err)
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
