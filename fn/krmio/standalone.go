package krmio

import (
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/inputlimit"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// CheckConfigFile refuses the first file of `sparkui-fn FILE...` when it is larger than
// maxBytes (0: no limit), or cannot be the functionConfig (configError).
func CheckConfigFile(path string, maxBytes int64) error {
	// configError reads the whole file: within the limit only.
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		if err := inputlimit.NewBudget(maxBytes).Draw(path, st.Size()); err != nil {
			return err
		}
	}
	return configError(path)
}

// configError says why the first file of `sparkui-fn FILE...` cannot be the
// functionConfig (kyaml's standalone mode reads the first file as the configuration and the
// others as the manifests): a newcomer's `sparkui-fn manifests.yaml` otherwise meets
// "unsupported functionConfig v1 Pod" without learning that the file was taken as the config.
// nil when the file is a functionConfig.
func configError(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read the functionConfig (the first file of sparkui-fn CONFIG.yaml FILE...): %w", err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	var docs []*yaml.Node
	for {
		var d yaml.Node
		if err := dec.Decode(&d); err != nil {
			if err != io.EOF {
				return nil // a syntax error: the function's own reading reports it with its line
			}
			break
		}
		if d.Kind == yaml.DocumentNode && len(d.Content) == 1 && !yamlx.IsNull(d.Content[0]) {
			docs = append(docs, d.Content[0])
		}
	}
	if len(docs) == 0 {
		return nil
	}
	first := docs[0]
	av, kind := yamlx.GetStr(first, "apiVersion"), yamlx.GetStr(first, "kind")
	isConfig := (av == "v1" && kind == "ConfigMap") || strings.HasPrefix(av, names.ConfigGroup+"/") || kind == names.ConfigKind
	what := ""
	switch {
	case !isConfig:
		what = "it holds a " + strings.TrimSpace(av+" "+kind)
		if av == "" && kind == "" {
			what = "it holds no Kubernetes object"
		}
	case len(docs) > 1:
		what = fmt.Sprintf("it holds %d documents, and a functionConfig is one", len(docs))
	default:
		return nil
	}
	return fmt.Errorf("%s is the first file, which sparkui-fn reads as its functionConfig (the configuration), but %s.\n"+
		"  Give the configuration first, then the manifests:  sparkui-fn CONFIG.yaml %s\n"+
		"  or, for the default configuration, pipe the manifests:  sparkui-fn < %s\n"+
		"  A configuration is a %s/v1alpha1 %s, or a v1 ConfigMap (docs/configuration.md)",
		path, what, path, path, names.ConfigGroup, names.ConfigKind)
}
