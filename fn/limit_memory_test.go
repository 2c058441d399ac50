package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dashboards is the input of issue 34: n ConfigMaps of about 10 KB each, a dashboard's JSON
// in one block scalar, as kustomize's configMapGenerator writes it (5,197 of them: 53 MB).
func dashboards(n int) []string {
	docs := make([]string, n)
	for i := range docs {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dash-%06d\n  namespace: monitoring\n  labels:\n    grafana_dashboard: \"1\"\ndata:\n  dashboard.json: |\n    {\n      \"title\": \"dashboard %d\",\n      \"panels\": [\n", i, i)
		for p := 0; p < 34; p++ {
			fmt.Fprintf(&b, "        {\n          \"id\": %d,\n          \"title\": \"Panel %d of dashboard %d\",\n          \"type\": \"timeseries\",\n"+
				"          \"targets\": [{\"expr\": \"sum(rate(http_requests_total{job=\\\"svc-%d\\\"}[5m])) by (code)\", \"refId\": \"A\"}],\n"+
				"          \"gridPos\": {\"h\": 8, \"w\": 12, \"x\": 0, \"y\": %d}\n        },\n", p, p, i, p, p*8)
		}
		b.WriteString("        {}\n      ]\n    }\n")
		docs[i] = b.String()
	}
	return docs
}

// TestFiftyMegabytesOfConfigMapsWithDefaults: issue 34's input, 53 MB of ordinary ConfigMaps
// (refused by the 16Mi byte limit before, though it takes under 500 MiB), passes with every
// default through every entry point that reads it: a ResourceList on stdin (kustomize, kpt),
// a plain stream (pipelines), standalone mode with stdin (the Argo CD plugin's call),
// the Helm post-renderer, and `sparkui-fn validate`. ConfigMaps pass through untouched.
func TestFiftyMegabytesOfConfigMapsWithDefaults(t *testing.T) {
	for _, env := range []string{"SPARKUI_MEMORY_LIMIT", "SPARKUI_MAX_INPUT_BYTES", "SPARKUI_MAX_APPLICATIONS"} {
		t.Setenv(env, "")
	}
	docs := dashboards(5197)
	stream := []byte(strings.Join(docs, "---\n"))
	if len(stream) < 50e6 {
		t.Fatalf("the input is %d bytes, want the issue's 50 MB", len(stream))
	}
	rl := []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + indentItems(docs))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "sparkui.yaml")
	os.WriteFile(cfg, []byte("apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nmetadata:\n  name: c\n"), 0o600)
	file := filepath.Join(dir, "dashboards.yaml")
	os.WriteFile(file, stream, 0o600)
	for _, tc := range []struct {
		name string
		args []string
		in   []byte
		out  []byte // nil: a validate report
	}{
		{"ResourceList", nil, rl, rl},
		{"plain stream", nil, stream, stream},
		{"standalone, stdin (Argo CD plugin)", []string{cfg, "-"}, stream, stream},
		{"helm-postrenderer", []string{"helm-postrenderer", cfg}, stream, stream},
		{"validate", []string{"validate", file}, nil, nil},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, bytes.NewReader(tc.in), &stdout, &stderr)
		if code != 0 {
			t.Errorf("%s: exit %d; stderr:\n%.2000s", tc.name, code, stderr.String())
			continue
		}
		if tc.out != nil && !bytes.Equal(stdout.Bytes(), tc.out) {
			t.Errorf("%s: the output (%d bytes) is not the input (%d bytes)", tc.name, stdout.Len(), len(tc.out))
		}
		if tc.out == nil && !strings.Contains(stderr.String(), "0 errors, 0 warnings, 0 info in 5197 objects from 1 file") {
			t.Errorf("%s: stderr:\n%s", tc.name, stderr.String())
		}
	}
}

// TestMemoryLimitBoundary: an input is refused before it is parsed when its estimate (16 MiB,
// 5 bytes a byte, 200 a YAML node) is over 60 % of --memory-limit (SPARKUI_MEMORY_LIMIT), with
// the message naming the limit, where it comes from, and how to raise it; at the smallest
// limit it fits, it runs. The input ends in a syntax error: a parse error would mean it was
// parsed.
func TestMemoryLimitBoundary(t *testing.T) {
	for _, env := range []string{"SPARKUI_MEMORY_LIMIT", "SPARKUI_MAX_INPUT_BYTES", "SPARKUI_MAX_APPLICATIONS"} {
		t.Setenv(env, "")
	}
	good := []byte(strings.Join(dashboards(3), "---\n"))
	bad := append(append([]byte(nil), good...), "---\na: [\n"...)
	// 3 ConfigMaps of 19 nodes each: the root, apiVersion and kind (key and value each),
	// metadata (key, mapping, name, namespace, labels, grafana_dashboard: 10), data (key,
	// mapping, the dashboard's key and its block scalar); the broken document 3 (root, a, [).
	nodes := int64(3*(1+2+2+10+4) + 3)
	estimate := 16<<20 + 5*int64(len(bad)) + 200*nodes
	fits := (estimate + 59) / 60 * 100 // the least memory whose 60 % (per hundred) holds it
	dir := t.TempDir()
	file := filepath.Join(dir, "in.yaml")
	os.WriteFile(file, bad, 0o600)
	for _, tc := range []struct {
		name, what string
		args       []string
		env        bool
		code       int
	}{
		{"stdin, flag", "standard input", []string{"--memory-limit=%d"}, false, 1},
		{"stdin, env", "standard input", nil, true, 1},
		{"validate, flag", file, []string{"validate", "--memory-limit", "%d", file}, false, 2},
	} {
		for _, memory := range []int64{fits, fits - 100} {
			var args []string
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "%d", fmt.Sprint(memory)))
			}
			from := "--memory-limit"
			if tc.env {
				t.Setenv("SPARKUI_MEMORY_LIMIT", fmt.Sprint(memory))
				from = "SPARKUI_MEMORY_LIMIT"
			} else {
				t.Setenv("SPARKUI_MEMORY_LIMIT", "")
			}
			var stdout, stderr bytes.Buffer
			code := run(args, bytes.NewReader(bad), &stdout, &stderr)
			if memory == fits {
				// It fits: read, then parsed, and the syntax error is found.
				if !strings.Contains(stderr.String(), "line ") || strings.Contains(stderr.String(), "memory") {
					t.Errorf("%s at %d: want the parse error; exit %d, stderr:\n%s", tc.name, memory, code, stderr.String())
				}
				continue
			}
			prefix := "sparkui-fn: "
			if tc.code == 2 {
				prefix = "sparkui-fn validate: "
			}
			want := fmt.Sprintf("%s%s: the input would take about %.1f MiB of memory to parse and hold (%d YAML nodes in %.1f KiB: ~200 bytes a node, "+
				"5 a byte), more than the %.1f MiB allowed by a memory limit of %d (%s; 60 %% of it); give the process more memory and raise the limit "+
				"with --memory-limit=<bytes> or SPARKUI_MEMORY_LIMIT=<bytes> (e.g. 8Gi; 0: no limit), or split the input\n",
				prefix, tc.what, float64(estimate)/(1<<20), nodes, float64(len(bad))/(1<<10), float64(memory/100*60)/(1<<20), memory, from)
			if code != tc.code || stdout.Len() != 0 || stderr.String() != want {
				t.Errorf("%s at %d: exit %d (want %d), %d bytes out; stderr:\n%s\nwant:\n%s", tc.name, memory, code, tc.code, stdout.Len(), stderr.String(), want)
			}
		}
	}
}
