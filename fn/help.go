package main

import (
	"github.com/spf13/cobra"

	"github.com/sparkui/sparkui/fn/validatecmd"
	"github.com/sparkui/sparkui/internal/cli"
)

// rootHelp is `sparkui-fn --help` and its section of docs/cli.md.
var rootHelp = cli.Command{
	Path:  "sparkui-fn",
	Short: "make Spark driver manifests valid and give each application a UI Service that is always right",
	Usage: []string{
		"sparkui-fn < resource-list.yaml        a KRM function: ResourceList in, ResourceList out (kustomize, kpt)",
		"sparkui-fn < manifests.yaml            plain YAML in, plain YAML out, default configuration",
		"sparkui-fn CONFIG.yaml FILE...         plain YAML out; CONFIG.yaml is the functionConfig",
		"sparkui-fn validate [FILE|DIR|-]...    check plain YAML, change nothing (sparkui-fn validate --help)",
		"sparkui-fn policy                      admission policies for a cluster (sparkui-fn policy --help)",
		"sparkui-fn helm-postrenderer [CONFIG]  the Helm 4 post-renderer plugin's command (sparkui-fn helm-postrenderer --help)",
		"sparkui-fn version",
	},
	Long: `The functionConfig is a sparkui.dev/v1alpha1 SparkUIService or a v1 ConfigMap
(docs/configuration.md); none means every default. Results go to the ResourceList, and one
line per error to stderr, which is all kustomize shows of a failing function; plain YAML and a
v1 List have no results field: every result goes to stderr. The items are written even when a
result is an error. An input that would not fit --memory-limit (the cgroup's limit, else 4Gi)
is refused before it is parsed, nothing written (docs/configuration.md, Input limits).`,
	Commands: []cli.Sub{
		{Name: "validate", Short: "check plain YAML with sparkui's rules (text, json, sarif or junit report)"},
		{Name: "policy", Short: "print ValidatingAdmissionPolicies that enforce the single-object rules at admission"},
		{Name: "helm-postrenderer", Short: "the Helm 4 post-renderer: rendered manifests in, the function's output out (deploy/helm-plugin)"},
		{Name: "version", Short: "print the version"},
	},
	Examples: []string{
		"# kustomize: the function's config under transformers:, its exec path relative to the kustomization",
		"kustomize build --enable-alpha-plugins --enable-exec examples/kubeflow",
		"# kpt",
		"kpt fn eval examples/kpt-imperative --exec bin/sparkui-fn -- serviceType=NodePort",
		"# standalone",
		"bin/sparkui-fn examples/spark-submit/fn-config.yaml examples/spark-submit/manifests.yaml",
	},
	Exit: []cli.Exit{
		{Code: 0, Meaning: "no result of severity error"},
		{Code: 1, Meaning: "a result of severity error (the output and results are still written), unreadable input, or an input over a limit (nothing written)"},
	},
	See: "docs/cli.md, docs/configuration.md, docs/rules.md",
}

// setHelp gives cmd the one help format, from h.
func setHelp(cmd *cobra.Command, h cli.Command) {
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
		c.OutOrStdout().Write([]byte(h.Render(validatecmd.Flags(c.Flags()))))
	})
}
