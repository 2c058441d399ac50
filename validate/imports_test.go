package validate

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDoesNotImportTransform: the rules say what a correct application is, from the model
// and the sidecar contract; if they called the rewrite, a bug in it would also be the yardstick
// it is measured with, and validate mode could not judge an output transform wrote.
func TestDoesNotImportTransform(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || deps[len(deps)-1] != "github.com/sparkui/sparkui/validate" {
		t.Fatalf("go list -deps gave no dependency list for validate: %q", deps)
	}
	for _, d := range deps {
		if d == "github.com/sparkui/sparkui/transform" || strings.HasPrefix(d, "github.com/sparkui/sparkui/transform/") {
			t.Errorf("validate depends on %s", d)
		}
	}
}
