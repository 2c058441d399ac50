package app

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// kindCheck is a test of which carrier the code looks at: a carrier kind constant, a
// comparison of an object kind or of the kubeflow injection, IsPod, an operator kind's name
// as a string. The same expression measures the "kind checks outside the adapters"
// (docs/how-it-works.md, "Adding a carrier").
var kindCheck = regexp.MustCompile(`\bKind(Pod|Workload|Kubeflow|Apache|Stackable)\b|ObjectKind *[!=]=|\.Injection *[!=]=|\bIsPod\(\)|"(SparkApplication|ScheduledSparkApplication|SparkConnect)"|case "(Pod|Deployment|StatefulSet|Job|CronJob)"`)

// allowedKindChecks are the lines outside the adapters that remain (matched by content, so
// that moving their file does not matter), each with why. The runtime's former one
// (runtime/binder kubeflowOwner) tells the kubeflow operator's Services by their owner's API
// group instead of its kind.
var allowedKindChecks = map[string]string{
	`case "Deployment": // the redirector's own, not a Spark carrier`: "testkit/scale/history.go reads the History redirector's own example manifest (examples/history-redirector/redirector.yaml): its Deployment runs the redirector, not a Spark application",
}

// TestKindChecksStayInAdapters: transform, validate, fn and the model's shared files ask a
// carrier for capabilities and facts; only the adapters (the files of this package that
// declare an Adapter, and registry.go) know which carrier is which.
func TestKindChecksStayInAdapters(t *testing.T) {
	root := filepath.Join("..", "..")
	var sites []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "internal/app/") && (rel == "internal/app/registry.go" || strings.Contains(string(b), "= &Adapter{")) {
			return nil
		}
		for i, line := range strings.Split(string(b), "\n") {
			if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, "//") || !kindCheck.MatchString(line) {
				continue
			}
			if allowedKindChecks[strings.TrimSpace(line)] != "" {
				continue
			}
			sites = append(sites, rel+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) > 0 {
		t.Errorf("kind checks outside the carrier adapters (declare a capability, a field or a note on the adapter instead):\n%s", strings.Join(sites, "\n"))
	}
}
