package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInputBytesLimit: every input form is refused past --max-input-bytes (or
// SPARKUI_MAX_INPUT_BYTES), before it is parsed, with nothing on stdout and a message naming
// the limit and both ways to raise it; at the limit exactly it is read as always. A small
// limit stands for the default (16Mi), which no unit test should allocate.
func TestInputBytesLimit(t *testing.T) {
	rl := readFixture(t, "random-port-hostnetwork")
	plain, err := os.ReadFile("../examples/spark-submit/manifests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "fn.yaml")
	cfgText := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
	os.WriteFile(cfg, []byte(cfgText), 0o600)
	manifests := filepath.Join(dir, "in", "manifests.yaml")
	os.MkdirAll(filepath.Dir(manifests), 0o700)
	os.WriteFile(manifests, plain, 0o600)
	for _, tc := range []struct {
		name  string
		args  []string
		env   string
		stdin []byte
		limit int // bytes of input
		code  int // exit status when refused (validate: 2, unusable input)
	}{
		{"ResourceList on stdin, flag", []string{"--max-input-bytes=%d"}, "", rl, len(rl), 1},
		{"ResourceList on stdin, env", nil, "%d", rl, len(rl), 1},
		{"plain stream on stdin, flag with a space", []string{"--max-input-bytes", "%d"}, "", plain, len(plain), 1},
		{"standalone file", []string{"--max-input-bytes=%d", cfg, manifests}, "", nil, len(plain) + len(cfgText), 1},
		{"standalone stdin", []string{cfg, "-"}, "%d", plain, len(plain) + len(cfgText), 1},
		{"validate file", []string{"validate", "--max-input-bytes=%d", manifests}, "", nil, len(plain), 2},
		{"validate directory, env", []string{"validate", filepath.Dir(manifests)}, "%d", nil, len(plain), 2},
		{"validate stdin", []string{"validate", "-max-input-bytes", "%d"}, "", plain, len(plain), 2},
	} {
		for _, over := range []bool{false, true} {
			limit := tc.limit
			if over {
				limit--
			}
			fill := func(s string) string { return strings.ReplaceAll(s, "%d", itoa(limit)) }
			var args []string
			for _, a := range tc.args {
				args = append(args, fill(a))
			}
			t.Setenv("SPARKUI_MAX_INPUT_BYTES", fill(tc.env))
			var stdin *bytes.Reader
			if tc.stdin != nil {
				stdin = bytes.NewReader(tc.stdin)
			} else {
				stdin = bytes.NewReader(nil)
			}
			var stdout, stderr bytes.Buffer
			code := run(args, stdin, &stdout, &stderr)
			if !over {
				if code != tc.code-1 && code != 0 || stdout.Len() == 0 { // validate: 1 is findings
					t.Errorf("%s at the limit (%d bytes): exit %d, %d bytes out; stderr:\n%s", tc.name, limit, code, stdout.Len(), stderr.String())
				}
				continue
			}
			msg := stderr.String()
			if code != tc.code || stdout.Len() != 0 || !strings.Contains(msg, "larger than the limit of ") || !strings.Contains(msg, " "+itoa(limit)+" bytes ") ||
				!strings.Contains(msg, "--max-input-bytes=<bytes>") || !strings.Contains(msg, "SPARKUI_MAX_INPUT_BYTES=<bytes>") {
				t.Errorf("%s over the limit (%d bytes): exit %d (want %d), %d bytes out; stderr:\n%s", tc.name, limit, code, tc.code, stdout.Len(), msg)
			}
		}
	}
}

// TestInputLimitValues: the limit reads units as Kubernetes quantities do and 0 as no limit;
// a value it cannot read is an error, not the default.
func TestInputLimitValues(t *testing.T) {
	in := readFixture(t, "random-port-hostnetwork")
	for _, tc := range []struct {
		flag, env string
		code      int
		stderr    string
	}{
		{"--max-input-bytes=1Ki", "", 1, "larger than the limit of 1Ki (1024 bytes) (set by --max-input-bytes or SPARKUI_MAX_INPUT_BYTES)"},
		{"--memory-limit=1Gi", "", 0, ""},
		{"--memory-limit=1Ki", "", 1, "standard input: the input is larger than the limit of 1 bytes (what a memory limit of 1Ki, --memory-limit, allows"},
		{"--memory-limit=lots", "", 1, `--memory-limit="lots": want a number of bytes`},
		{"", "1Mi", 0, ""},
		{"--max-input-bytes=0", "10", 0, ""},
		{"--max-input-bytes=ten", "", 1, `--max-input-bytes="ten": want a number of bytes`},
		{"", "-5", 1, `SPARKUI_MAX_INPUT_BYTES="-5": want a number of bytes`},
		{"--max-applications=many", "", 1, `--max-applications="many": want a number of applications`},
		{"--max-input-bytes", "", 1, "flag --max-input-bytes needs a value"},
	} {
		t.Setenv("SPARKUI_MAX_INPUT_BYTES", tc.env)
		var args []string
		if tc.flag != "" {
			args = []string{tc.flag}
		}
		var stdout, stderr bytes.Buffer
		code := run(args, bytes.NewReader(in), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.stderr) || (code == 0) != (stdout.Len() > 0) {
			t.Errorf("%s %s: exit %d, want %d; %d bytes out; stderr:\n%s", tc.flag, tc.env, code, tc.code, stdout.Len(), stderr.String())
		}
	}
}

// TestMaxApplications: a transform run over --max-applications (SPARKUI_MAX_APPLICATIONS) is
// refused before anything is rewritten, nothing on stdout, whatever the input's form; at the
// limit, and in validate mode (which adds nothing), it runs; an uninstall run is bounded too.
func TestMaxApplications(t *testing.T) {
	one, err := os.ReadFile("../testdata/assets/carriers/kubeflow-sparkapplication.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var stream []string
	for i := 0; i < 3; i++ {
		stream = append(stream, strings.Replace(string(one), "name: pi-estimate", "name: pi-estimate-"+itoa(i), 1))
	}
	plain := []byte(strings.Join(stream, "---\n"))
	rl := []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indentItems(stream))
	rlValidate := append(append([]byte(nil), rl...), "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {mode: validate}\n"...)
	rlUninstall := append(append([]byte(nil), rl...), "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {mode: uninstall}\n"...)
	for _, tc := range []struct {
		name string
		in   []byte
		args []string
		env  string
		code int
		msg  string
	}{
		{"plain, flag", plain, []string{"--max-applications=2"}, "", 1, "the input has 3 applications, more than the limit of 2"},
		{"ResourceList, env", rl, nil, "2", 1, "the input has 3 applications, more than the limit of 2"},
		{"at the limit", rl, []string{"--max-applications", "3"}, "", 0, ""},
		{"no limit", rl, nil, "0", 0, ""},
		// Validate mode rewrites nothing: the limit does not apply (the untransformed
		// applications are SUI060 errors, exit 1, and the list is written back).
		{"validate mode", rlValidate, []string{"--max-applications=1"}, "", 1, "[SUI060]"},
		// Uninstall edits every application, as transform does: bounded the same way.
		{"uninstall mode", rlUninstall, []string{"--max-applications=2"}, "", 1, "the input has 3 applications, more than the limit of 2"},
	} {
		t.Setenv("SPARKUI_MAX_APPLICATIONS", tc.env)
		var stdout, stderr bytes.Buffer
		code := run(tc.args, bytes.NewReader(tc.in), &stdout, &stderr)
		refused := strings.Contains(stderr.String(), "more than the limit of")
		if code != tc.code || !strings.Contains(stderr.String(), tc.msg) || refused == (stdout.Len() > 0) {
			t.Errorf("%s: exit %d, want %d; %d bytes out; stderr:\n%s", tc.name, code, tc.code, stdout.Len(), stderr.String())
		}
		if tc.name == "validate mode" && refused {
			t.Errorf("validate mode was refused by the application limit:\n%s", stderr.String())
		}
		if refused && !strings.Contains(stderr.String(), "--max-applications=<n> or SPARKUI_MAX_APPLICATIONS=<n>") {
			t.Errorf("%s: the message does not say how to raise the limit:\n%s", tc.name, stderr.String())
		}
		if code == 0 && tc.name != "validate mode" && strings.Count(stdout.String(), "kind: RoleBinding\n") != 3 {
			t.Errorf("%s: want the 3 applications rewritten:\n%s", tc.name, stdout.String())
		}
	}
}

func indentItems(docs []string) string {
	var b strings.Builder
	for _, d := range docs {
		for j, line := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
			if j == 0 {
				b.WriteString("- ")
			} else {
				b.WriteString("  ")
			}
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
