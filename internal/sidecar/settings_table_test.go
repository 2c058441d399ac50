package sidecar

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/version"
)

// TestSettingsTable keeps version.Settings, the contract each setting came with (SUI062
// judges pinned images by it), complete and honest: every flag of Config, every variable the
// function writes (collected from the runtime containers of every golden's expected output),
// has a row; every row names a contract no newer than the current one and a CHANGELOG.md
// entry that exists.
func TestSettingsTable(t *testing.T) {
	need := map[string]string{} // name → where it was seen
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	new(Config).Flags(fs)
	fs.VisitAll(func(f *flag.Flag) { need["--"+f.Name] = "sidecar.Config.Flags" })
	for _, e := range []string{EnvPodName, EnvPodNamespace, EnvPodUID, EnvHostIP, EnvAppID, EnvRunLabel, EnvHistoryURL, EnvRedirectorPort} {
		need[e] = "internal/sidecar"
	}
	goldens, err := filepath.Glob("../../testdata/*/expected.yaml")
	if err != nil || len(goldens) < 20 {
		t.Fatalf("goldens: %v (%d found)", err, len(goldens))
	}
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := (&kio.ByteReader{Reader: strings.NewReader(string(b)), OmitReaderAnnotations: true}).Read()
		if err != nil {
			continue // a golden of an error case may not be a stream
		}
		for _, n := range nodes {
			walkRuntimes(n.YNode(), func(c *yaml.Node) {
				for _, a := range seq(c, "args") {
					if name, _, _ := strings.Cut(a.Value, "="); strings.HasPrefix(name, "--") {
						need[name] = g
					}
				}
				for _, e := range seq(c, "env") {
					if v := field(e, "name"); v != nil {
						need[v.Value] = g
					}
				}
			})
		}
	}
	cur := version.MustContract(version.RuntimeContract)
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, where := range need {
		if _, ok := version.SettingSince(name); !ok {
			t.Errorf("%s (written in %s) has no row in internal/version.Settings", name, where)
		}
	}
	for _, s := range version.Settings {
		c, err := version.ParseContract(s.Since)
		if err != nil || cur.Less(c) {
			t.Errorf("%s: since %q is not a contract up to the current %s", s.Name, s.Since, cur)
		}
		if !strings.Contains(string(changelog), "\n### "+s.Changelog+"\n") {
			t.Errorf("%s: CHANGELOG.md has no entry %q", s.Name, s.Changelog)
		}
		if need[s.Name] == "" {
			t.Errorf("%s has a row but the function never writes it", s.Name)
		}
	}
}

// walkRuntimes calls f on every mapping named sparkui-runtime in a list of containers.
func walkRuntimes(n *yaml.Node, f func(*yaml.Node)) {
	switch n.Kind {
	case yaml.MappingNode:
		if v := field(n, "name"); v != nil && v.Value == ContainerName && field(n, "args") != nil {
			f(n)
		}
		for i := 1; i < len(n.Content); i += 2 {
			walkRuntimes(n.Content[i], f)
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			walkRuntimes(c, f)
		}
	}
}

func field(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func seq(n *yaml.Node, key string) []*yaml.Node {
	if v := field(n, key); v != nil && v.Kind == yaml.SequenceNode {
		return v.Content
	}
	return nil
}
