package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/version"
)

// contractCases are the reference inputs of the runtime contract's fingerprint: between them
// every optional arg, env entry and mount the function can inject (a bare Pod, a workload's
// run label and guard, nodePort's HOST_IP, the History Server's env, the auth Secret mount,
// TLS's --ssl-ui-port, runtime.events: false's --events=false).
var contractCases = []string{"fixed-port", "carrier-deployment", "external-uri-nodeport", "history-server",
	"runtime-auth-header", "tls-explicit-port", "carrier-kubeflow-template", "runtime-events-off"}

// injected is the shape of what transform injects, without the values that are the
// application's (flag values, names): args as flag names, env as names, everything else of the
// runtime container but its image (the image is the contract's tag, checked apart), and the
// driver's preStop hook.
func injected(t *testing.T, out []byte) []any {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	var found []any
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			var m map[string]any
			if err := n.Decode(&m); err == nil {
				if m["name"] == sidecar.ContainerName && m["restartPolicy"] == "Always" {
					delete(m, "image")
					var flags []any
					for _, a := range m["args"].([]any) {
						name, _, _ := strings.Cut(fmt.Sprint(a), "=")
						flags = append(flags, name)
					}
					m["args"] = flags
					var env []any
					for _, e := range m["env"].([]any) {
						env = append(env, e.(map[string]any)["name"])
					}
					m["env"] = env
					found = append(found, m)
				}
				if ps, ok := m["preStop"]; ok {
					found = append(found, map[string]any{"preStop": ps})
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	return found
}

var fingerprintLine = regexp.MustCompile("(?m)^- fingerprint: `(sha256:[0-9a-f]{64})`$")

// TestRuntimeContractRecorded keeps CHANGELOG.md honest: the fingerprint of what the function
// injects on the reference inputs is the one recorded for the current contract, and the entry
// names the image. Changing an arg, env entry, probe, mount, securityContext, resources or the
// hook without a new contract and its entry fails here: such a change restarts or re-runs
// every served application (docs/runtime-contract.md).
func TestRuntimeContractRecorded(t *testing.T) {
	var all []any
	for _, c := range contractCases {
		in, err := os.ReadFile(filepath.Join("../testdata", c, "input.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		out := runProcessor(t, in)
		got := injected(t, out)
		if len(got) == 0 {
			t.Fatalf("%s: no runtime container in the output", c)
		}
		all = append(all, map[string]any{c: got})
	}
	b, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	fp := fmt.Sprintf("sha256:%x", sha256.Sum256(b))
	cl, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	heading := "### Runtime contract " + version.RuntimeContract + " "
	i := strings.Index(string(cl), heading)
	if i < 0 {
		t.Fatalf("CHANGELOG.md has no %q entry for internal/version.RuntimeContract; the fingerprint of what is injected now is %s", heading, fp)
	}
	entry := string(cl[i+len(heading):])
	if j := strings.Index(entry, "\n### "); j >= 0 {
		entry = entry[:j]
	}
	m := fingerprintLine.FindStringSubmatch(entry)
	if m == nil {
		t.Fatalf("CHANGELOG.md's contract %s entry has no \"- fingerprint: `sha256:…`\" line; now: %s", version.RuntimeContract, fp)
	}
	if m[1] != fp {
		t.Errorf("what the function injects changed (fingerprint %s, CHANGELOG.md records %s for contract %s): "+
			"a restart-class change needs a new runtime contract (internal/version.RuntimeContract) and its CHANGELOG.md entry",
			fp, m[1], version.RuntimeContract)
	}
	if !strings.Contains(entry, "`"+version.RuntimeImage()+"`") {
		t.Errorf("CHANGELOG.md's contract %s entry does not name its image %s", version.RuntimeContract, version.RuntimeImage())
	}
}
