package function

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/yamlx"
	"github.com/sparkui/sparkui/transform"
)

// TestPlanningReadsOnly: on every golden input, computing the plans of all applications
// leaves every item as it was: only executing them writes (transform.Apply).
func TestPlanningReadsOnly(t *testing.T) {
	inputs, err := filepath.Glob("../../testdata/*/input.yaml")
	if err != nil || len(inputs) < 50 {
		t.Fatalf("%d golden inputs, %v", len(inputs), err)
	}
	planned := 0
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		rl := &framework.ResourceList{}
		rw := &kio.ByteReadWriter{Reader: bytes.NewReader(b), KeepReaderAnnotations: true}
		if rl.Items, err = rw.Read(); err != nil {
			continue // an unreadable input is the I/O layer's case (krmio)
		}
		cfg, results := LoadConfig(rw.FunctionConfig)
		if HasError(results) || cfg.Mode != "transform" {
			continue
		}
		opts := app.CarrierOptions{SparkConf: cfg.SparkConf}
		if cfg.KubeflowInjection == "webhook" {
			opts.KubeflowInjection = app.InjectWebhook
		}
		items := yamlx.Unalias(rl.Items).Items
		before, err := kio.StringAll(items)
		if err != nil {
			t.Fatal(err)
		}
		m := app.BuildWith(items, opts)
		transform.PlanApps(m, cfg.Transform)
		planned += len(m.Apps)
		if after, _ := kio.StringAll(items); after != before {
			t.Errorf("%s: planning changed the input:\n%s\nwant\n%s", in, after, before)
		}
	}
	if planned < 50 {
		t.Errorf("only %d applications planned", planned)
	}
}
