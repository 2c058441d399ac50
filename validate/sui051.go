package validate

import "sigs.k8s.io/kustomize/kyaml/fn/framework"

// SUI051: an object's aliases expand beyond the bound. Raised while screening the input
// (fn/krmio/screen.go), before there is a model: the object is never expanded.
var SUI051 = Rule{
	ID:       "SUI051",
	Severity: framework.Error,
	Title:    "an object's YAML aliases expand without bound (an alias bomb) or contain themselves",
	Name:     "AliasBomb",
	Catches:  "A document whose anchors and aliases (merge keys `<<:` included) would expand it to more than twice its own nodes plus 10,000, such as nine levels of nine aliases (a 1 KB file standing for 9^9 nodes), or an alias inside the node it names.",
	Why:      "Expanding such a document exhausts the memory of whatever reads it (sparkui-fn validate grew to 23 GB on one); no manifest needs it. sparkui reads no further and leaves the object as it is.",
	Fix:      "Write the shared parts out, or use kustomize patches or components instead of YAML aliases.",
	RaisedBy: "fn/krmio/screen.go",
	Fixtures: "`TestAliasBomb` in [`fn/input_test.go`](../fn/input_test.go) (a 1 KB bomb through the function and `sparkui-fn validate`, memory measured).",
	Failing: `data:
  a: &a [x, x, x, x, x, x, x, x, x]
  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]   # … nine levels: SUI051
`,
	Passing: `  driver: &pod {cores: 1, memory: 1g}
  executor: *pod                              # a shared template expands once
`,
}
