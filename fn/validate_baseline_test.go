package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkui/sparkui/internal/version"
)

// newRuntimeImage is what an upgrade that changes the runtime contract writes instead of the
// goldens' image.
var newRuntimeImage = version.RuntimeRepository + ":" + version.RuntimeTag("99.0")

// baselinePair writes a carrier golden's output (OLD) and the same with a new runtime image
// (NEW, what an upgrade that changes the runtime contract renders), and returns their paths.
func baselinePair(t *testing.T, golden string) (old, new string) {
	t.Helper()
	b := mustRead(t, filepath.Join("..", "testdata", golden, "expected.yaml"))
	dir := t.TempDir()
	old, new = filepath.Join(dir, "main.yaml"), filepath.Join(dir, "change.yaml")
	if err := os.WriteFile(old, b, 0o644); err != nil {
		t.Fatal(err)
	}
	up := strings.ReplaceAll(string(b), version.RuntimeImage(), newRuntimeImage)
	if up == string(b) {
		t.Fatalf("%s: no runtime image to change", golden)
	}
	if err := os.WriteFile(new, []byte(up), 0o644); err != nil {
		t.Fatal(err)
	}
	return old, new
}

// TestValidateBaselineCommand: `sparkui-fn validate --baseline OLD NEW` in every format: a
// Job's changed template is refused (exit 1, the finding at the image's line in NEW), a
// Deployment's is a warning (exit 0); equal renderings report nothing.
func TestValidateBaselineCommand(t *testing.T) {
	old, new := baselinePair(t, "carrier-job")
	code, stdout, stderr := runCmd(t, "", "--baseline", old, new, "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	var out jsonOut
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 1 {
		t.Fatalf("results %+v", out.Results)
	}
	r := out.Results[0]
	lines := strings.Split(string(mustRead(t, new)), "\n")
	if r.Rule != "SUI070" || r.Severity != "error" || r.ResourceRef.Kind != "Job" || r.Field.Path != "spec.template.spec.initContainers[0].image" ||
		r.File == nil || r.File.Path != new || !strings.Contains(lines[r.File.Line-1], "image: "+newRuntimeImage) {
		t.Errorf("result %+v", r)
	}
	if code, stdout, _ := runCmd(t, "", "--baseline", old, new); code != 1 || !strings.HasPrefix(stdout, new+":") || !strings.Contains(stdout, ": error: [SUI070] Job reports/daily-report changed (sparkui's fields spec.template.spec.initContainers[0].image)") {
		t.Errorf("text: exit %d %q", code, stdout)
	}
	code, stdout, _ = runCmd(t, "", "--baseline", old, new, "-o", "sarif")
	var sarif map[string]any
	if err := json.Unmarshal([]byte(stdout), &sarif); err != nil || code != 1 {
		t.Fatalf("sarif: exit %d %v", code, err)
	}
	if err := sarifSchema(t).Validate(sarif); err != nil {
		t.Errorf("SARIF schema: %v", err)
	}
	if res := result0(sarif); res["ruleId"] != "SUI070" || res["level"] != "error" {
		t.Errorf("sarif result %v", res)
	}
	code, stdout, _ = runCmd(t, "", "--baseline", old, new, "-o", "junit")
	var doc junitDoc
	if err := xml.Unmarshal([]byte(stdout), &doc); err != nil || code != 1 || !strings.Contains(stdout, "SUI070") {
		t.Errorf("junit: exit %d %v", code, err)
	}

	old, new = baselinePair(t, "carrier-deployment")
	if code, stdout, _ := runCmd(t, "", "--baseline", old, new); code != 0 || !strings.Contains(stdout, "warning: [SUI071] Deployment") {
		t.Errorf("deployment: exit %d %q", code, stdout)
	}
	if code, stdout, stderr := runCmd(t, "", "--baseline", old, old); code != 0 || stdout != "" || !strings.Contains(stderr, "0 errors, 0 warnings, 0 info") {
		t.Errorf("equal renderings: exit %d %q %q", code, stdout, stderr)
	}
	// NEW on standard input, OLD a file; both on standard input is unusable.
	if code, stdout, _ := runCmd(t, string(mustRead(t, new)), "--baseline", old, "-"); code != 0 || !strings.Contains(stdout, "stdin:") {
		t.Errorf("stdin: exit %d %q", code, stdout)
	}
	if code, _, stderr := runCmd(t, "", "--baseline", "-", "-"); code != 2 || !strings.Contains(stderr, "both want standard input") {
		t.Errorf("both stdin: exit %d %q", code, stderr)
	}
	if code, _, stderr := runCmd(t, "", "--baseline", filepath.Join(t.TempDir(), "missing.yaml"), new); code != 2 || !strings.Contains(stderr, "--baseline") {
		t.Errorf("missing baseline: exit %d %q", code, stderr)
	}
}
