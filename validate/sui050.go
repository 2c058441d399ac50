package validate

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// SUI050: an object sparkui would read is not read: a Spark operator's resource at an
// apiVersion sparkui does not read, or objects inside a List among other documents.
var SUI050 = Rule{
	ID:       "SUI050",
	Severity: framework.Warning,
	Title:    "a Spark operator resource at an unread apiVersion, or a List nested in the input, is not read",
	Name:     "NotRead",
	Catches:  "A Spark operator's resource of a kind sparkui reads at another version than the ones it reads (" + strings.Join(app.ReadVersions(), " | ") + "), e.g. a kubeflow SparkApplication at the older v1beta1 or a future v1; and a List (kind List or …List with items) that is one object among others, or inside another List.",
	Why:      "sparkui reads the versions whose schema it knows (the carrier adapters registered in internal/app/registry.go) and unwraps a List only when it is the whole input, as kustomize and kpt do. Anything else passes through untouched: its driver gets no UI Service and no runtime, and nothing else would say so. kubectl apply creates the objects of a nested List all the same.",
	Fix:      "Move the resource to a version sparkui reads (the message names them), or write the List's objects as documents of the stream.",
	Failing: `apiVersion: sparkoperator.k8s.io/v1beta1   # SUI050 apiVersion
kind: SparkApplication
`,
	Passing: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
`,
	Check: checkSUI050,
}

func checkSUI050(ctx *Context) []Finding {
	var out []Finding
	for _, it := range ctx.Model.Items {
		if app.Ignored(it) {
			continue
		}
		n := it.YNode()
		av, kind := yamlx.GetStr(n, "apiVersion"), yamlx.GetStr(n, "kind")
		// The adapters' registry says which versions of its custom resources sparkui reads.
		if group, versions, unread := app.UnreadVersion(av, kind); unread {
			_, version, _ := strings.Cut(av, "/")
			out = append(out, Finding{Object: it, Field: "apiVersion",
				Msg: objName(it) + ": sparkui reads " + kind + " of " + group + " at " + strings.Join(versions, " and ") + " only, not " + version + ": it is passed through untouched (no UI Service, no runtime)"})
			continue
		}
		if strings.HasSuffix(kind, "List") && yamlx.Get(n, "items") != nil {
			out = append(out, Finding{Object: it, Field: "items",
				Msg: objName(it) + ": the objects of a List are read only when the List is the whole input; its items (" + itoa(len(yamlx.Items(yamlx.Get(n, "items")))) + ") pass through untouched, though kubectl apply creates them: write them as documents of the stream"})
		}
	}
	return out
}
