package validate

import "sigs.k8s.io/kustomize/kyaml/fn/framework"

// SUI052: a file found in a directory given to `sparkui-fn validate` is not a regular file.
var SUI052 = Rule{
	ID:       "SUI052",
	Severity: framework.Warning,
	Title:    "a *.yaml file under a directory given to `sparkui-fn validate` is not a regular file and was not read",
	Name:     "InputNotRegularFile",
	Catches:  "A named pipe, socket or device named *.yaml or *.yml below a directory passed to `sparkui-fn validate` (directly or through a symlink).",
	Why:      "Opening a named pipe blocks until something writes to it, which in a checkout is never: the command would hang. It is reported and skipped; a pipe named on the command line, such as `<(kustomize build)`, is read as asked.",
	Fix:      "Remove the special file from the directory, or name what feeds it on the command line.",
	RaisedBy: "fn/krmio/files.go",
	Fixtures: "`TestValidateSkipsFIFO` in [`fn/validatecmd_modes_test.go`](../fn/validatecmd_modes_test.go) (a real FIFO).",
	Failing: `manifests/
  app.yaml
  feed.yaml      # a named pipe (mkfifo): SUI052, not read
`,
	Passing: `manifests/
  app.yaml
`,
}
