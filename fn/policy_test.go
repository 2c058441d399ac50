package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sparkui/sparkui/validate/policy"
)

// TestPolicyCommand: `sparkui-fn policy` prints exactly the generated policies (what
// examples/admission_test.go installs on a real API server), and refuses an argument.
func TestPolicyCommand(t *testing.T) {
	want, err := policy.YAML()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"policy"}, strings.NewReader("ignored"), &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if stdout.String() != string(want) {
		t.Errorf("sparkui-fn policy prints something else than policy.YAML:\n%s", stdout.String())
	}
	if n := strings.Count(stdout.String(), "kind: ValidatingAdmissionPolicyBinding\n"); n < 7 {
		t.Errorf("%d bindings", n)
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"policy", "extra.yaml"}, nil, &stdout, &stderr); code != 2 || stdout.Len() != 0 ||
		!strings.Contains(stderr.String(), `takes no argument, got "extra.yaml"`) {
		t.Errorf("policy extra.yaml: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
