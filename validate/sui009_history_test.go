package validate

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/sidecar"
)

func historyResults(t *testing.T, src string, h *sidecar.History) []string {
	t.Helper()
	items, err := (&kio.ByteReader{Reader: strings.NewReader(src), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range Run(&Context{Model: app.BuildWith(items, app.CarrierOptions{}), History: h}) {
		if r.Tags["rule"] == "SUI009" && r.Severity == framework.Error {
			out = append(out, r.Message)
		}
	}
	return out
}

// TestSUI009History: with the functionConfig known (the function runs the rules), a runtime
// whose hand-off env differs from historyServer is reported; without it only what the items
// alone tell (usable values, one redirector port per namespace).
func TestSUI009History(t *testing.T) {
	b, err := os.ReadFile("testdata/sui009-pass-history/input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	if got := historyResults(t, src, nil); len(got) != 0 {
		t.Errorf("config unknown: %v", got)
	}
	if got := historyResults(t, src, &sidecar.History{URL: "https://spark-history.example.com", RedirectorPort: 8080}); len(got) != 0 {
		t.Errorf("config agrees: %v", got)
	}
	for _, c := range []struct {
		h    sidecar.History
		want string
	}{
		{sidecar.History{URL: "https://other.example.com", RedirectorPort: 8080},
			`the runtime's History Server URL (SPARKUI_HISTORY_URL) is "https://spark-history.example.com", the functionConfig's historyServer.url "https://other.example.com"`},
		{sidecar.History{RedirectorPort: 8080},
			`the runtime's History Server URL (SPARKUI_HISTORY_URL) is "https://spark-history.example.com", the functionConfig's historyServer.url ""`},
		{sidecar.History{URL: "https://spark-history.example.com", RedirectorPort: 9090},
			"the runtime's redirector port (SPARKUI_REDIRECTOR_PORT) is 8080, the functionConfig's historyServer.redirectorPort 9090"},
	} {
		if got := historyResults(t, src, &c.h); len(got) != 1 || !strings.Contains(got[0], c.want) {
			t.Errorf("%+v: %v, want one with %q", c.h, got, c.want)
		}
	}

	// A second application in the namespace whose runtime was told another port.
	second := strings.ReplaceAll(strings.ReplaceAll(src, "wordcount", "linecount"), "spark-7e0d4c1a9b2f4e6d8c3b5a7f9e1d2c4b", "spark-0a1b2c3d4e5f60718293a4b5c6d7e8f9")
	second = strings.Replace(second, `value: "8080"`, `value: "9090"`, 1)
	_, secondItems, _ := strings.Cut(second, "\nitems:\n")
	got := historyResults(t, src+secondItems, nil)
	if len(got) != 1 || !strings.Contains(got[0], "to redirector port 9090, but analytics/wordcount-5b2d0c9e1f3a7b64-driver's runtime in the same namespace to 8080") {
		t.Errorf("two ports in one namespace: %v", got)
	}
}
