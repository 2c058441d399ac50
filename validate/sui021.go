package validate

import "sigs.k8s.io/kustomize/kyaml/fn/framework"

// SUI021: a mapping key defined twice in one object. Raised while reading the input
// (fn/function/duplicates.go), before there is a model to check.
var SUI021 = Rule{
	ID:       "SUI021",
	Severity: framework.Error,
	Title:    "a mapping key is defined twice in an object",
	Name:     "DuplicateKey",
	Catches:  "A mapping that defines the same key twice in one object, such as kind: Pod then kind: Service, or a port's port: 80 then port: 0.",
	Why:      "YAML parsers disagree on such a mapping: kubectl refuses the object (mapping key already defined), while kyaml-based tools keep both keys and read the first. sparkui cannot know which value is meant, so it changes nothing.",
	Fix:      "Keep one of the two keys (the field path names the second).",
	RaisedBy: "fn/function/duplicates.go",
	Fixtures: "[`testdata/duplicate-keys`](../testdata/duplicate-keys/input.yaml) (the golden tests).",
	Failing: `  ports:
  - name: spark-ui
    port: 80
    port: 0        # SUI021 spec.ports[0].port
`,
	Passing: `  ports:
  - name: spark-ui
    port: 80
`,
}
