package validate

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/version"
)

// TestSUI062Skew: what a runtime of each contract does with each kind of setting it does not
// know (docs/runtime-contract.md, "Skew"), as SUI062's severity, and the image it advises.
// A row of a later contract is added to the table for the test, as a contract 1.3 would.
func TestSUI062Skew(t *testing.T) {
	saved := version.Settings
	defer func() { version.Settings = saved }()
	version.Settings = append(append([]version.Setting(nil), saved...),
		version.Setting{Name: "--later", Since: "1.3"}, version.Setting{Name: "SPARKUI_LATER", Since: "1.3"})
	b, err := os.ReadFile("testdata/sui062-pass/input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, image, args, env string
		sev                    framework.Severity // "" = no finding
		want                   string
	}{
		{name: "1.0 runtime, a 1.3 flag: idles", image: "ghcr.io/sparkui/sparkui-runtime:0.1.0", args: "--later=x",
			sev: framework.Error, want: "--later (contract 1.3). A contract 1.0 runtime stops at a flag it does not know and idles: the UI Service is never bound. Set runtime.image (functionConfig) to ghcr.io/sparkui/sparkui-runtime:contract-1.3 or a newer contract of major 1"},
		{name: "1.0 runtime in a mirror, a 1.3 variable: ignored without a word", image: "registry.example.com/platform/sparkui-runtime:0.1.0", env: "SPARKUI_LATER",
			sev: framework.Warning, want: "ignores variables it does not know without a word: it binds without what they add. Set runtime.image (functionConfig) to registry.example.com/platform/sparkui-runtime:contract-1.3 or"},
		{name: "1.1 runtime, an unknown flag: ignored, said", image: "ghcr.io/sparkui/sparkui-runtime:contract-1.1", args: "--from-a-newer-contract=x",
			sev: framework.Warning, want: "A contract 1.1 runtime ignores them and binds without what they add, and says so in its termination message. Set runtime.image (functionConfig) to the runtime image of the sparkui-fn that wrote these settings"},
		{name: "1.1 runtime, an unknown required variable: refused", image: "ghcr.io/sparkui/sparkui-runtime:contract-1.1", env: "SPARKUI_REQUIRE_X",
			sev: framework.Error, want: "refuses a --require-* or SPARKUI_REQUIRE_* setting it does not know"},
		{name: "1.3 runtime, a 1.3 flag", image: "ghcr.io/sparkui/sparkui-runtime:contract-1.3", args: "--later=x"},
		// The real --events (contract 1.2): a 1.1 runtime ignores it, and says so.
		{name: "1.1 runtime, --events=false of 1.2: ignored, said", image: "ghcr.io/sparkui/sparkui-runtime:contract-1.1", args: "--events=false",
			sev: framework.Warning, want: "--events (contract 1.2). A contract 1.1 runtime ignores them and binds without what they add, and says so in its termination message. Set runtime.image (functionConfig) to ghcr.io/sparkui/sparkui-runtime:contract-1.2"},
		{name: "1.2 runtime, --events=false", image: "ghcr.io/sparkui/sparkui-runtime:contract-1.2", args: "--events=false"},
		{name: "a newer minor, an unknown flag", image: "ghcr.io/sparkui/sparkui-runtime:contract-1.7", args: "--from-a-newer-contract=x"},
		{name: "a variable that is not the runtime's", image: "ghcr.io/sparkui/sparkui-runtime:0.1.0", env: "TZ"},
		{name: "digest alone: SUI063's", image: "ghcr.io/sparkui/sparkui-runtime@sha256:0123", args: "--later=x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := strings.Replace(string(b), "image: ghcr.io/sparkui/sparkui-runtime:0.1.0", "image: "+tc.image, 1)
			if tc.args != "" {
				s = strings.Replace(s, "      - --skip-ports=7078,7079\n", "      - --skip-ports=7078,7079\n      - "+tc.args+"\n", 1)
			}
			if tc.env != "" {
				s = strings.Replace(s, "            fieldPath: metadata.uid\n      resources:", "            fieldPath: metadata.uid\n      - name: "+tc.env+"\n        value: x\n      resources:", 1)
			}
			items, err := (&kio.ByteReader{Reader: strings.NewReader(s), OmitReaderAnnotations: true}).Read()
			if err != nil {
				t.Fatal(err)
			}
			got := checkSUI062(&Context{Model: app.BuildWith(items, app.CarrierOptions{})})
			if tc.sev == "" {
				if len(got) != 0 {
					t.Fatalf("want no finding, got %q", got[0].Msg)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one finding, got %d", len(got))
			}
			if got[0].Severity != tc.sev || got[0].Field != "spec.initContainers[0].image" || !strings.Contains(got[0].Msg, tc.want) {
				t.Errorf("got %s at %s: %q\nwant %s containing %q", got[0].Severity, got[0].Field, got[0].Msg, tc.sev, tc.want)
			}
		})
	}
}
