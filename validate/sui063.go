package validate

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/sparkui/sparkui/internal/version"
)

// SUI063: the runtime image's tag says nothing sparkui can judge.
var SUI063 = Rule{
	ID:       "SUI063",
	Severity: framework.Info,
	Title:    "the runtime image's contract cannot be judged from its reference",
	Name:     "RuntimeImageUnjudged",
	Catches: "A sparkui-runtime sidecar whose image is pinned by digest alone (`…@sha256:…`), has no tag (the registry's `latest`), a tag of no scheme sparkui publishes the runtime under " +
		"(only `contract-MAJOR.MINOR`, and `0.1.0` before contracts), or names a contract of a newer major than the one this sparkui-fn writes for.",
	Why: "SUI062 judges a pinned runtime by the contract its tag names; here the reference does not say, so a runtime older than the sidecar's settings (which idles or refuses, leaving the application without its UI) would go unnoticed. " +
		"A newer major may have removed or renamed settings this sparkui-fn writes.",
	Fix: "Check which contract the image implements, e.g. compare its digest with the published contract image's (`crane digest ghcr.io/sparkui/sparkui-runtime:contract-1.1`), or read the first line of its log (`sparkui-runtime starting … runtime_contract=1.1`). " +
		"Pin tag and digest together (`…/sparkui-runtime:contract-1.1@sha256:…`): the kubelet pulls the digest and SUI062 judges the tag.",
	Failing: `initContainers:
- name: sparkui-runtime
  image: ghcr.io/sparkui/sparkui-runtime@sha256:9f86d0…   # SUI063 spec.initContainers[0].image
`,
	Passing: `  image: ghcr.io/sparkui/sparkui-runtime:contract-1.1@sha256:9f86d0…
`,
	Check: checkSUI063,
}

// checkSUI063: say, once per sidecar, that the image's contract is unknown and what the
// settings need, so that whoever pinned it can check.
func checkSUI063(ctx *Context) []Finding {
	var out []Finding
	cur := version.MustContract(version.RuntimeContract)
	for _, a := range ctx.Model.Apps {
		s, ok := runtimeImage(a)
		if !ok || s.judged() {
			continue
		}
		var why string
		switch s.kind {
		case version.TagDigestOnly:
			why = "is pinned by digest alone: sparkui cannot tell which runtime contract it implements"
		case version.TagNone:
			why = "has no tag (the registry's latest, which moves): sparkui cannot tell which runtime contract it implements"
		case version.TagUnknown:
			why = "has a tag of no scheme sparkui publishes the runtime under (contract-MAJOR.MINOR; 0.1.0 before contracts): sparkui cannot tell which runtime contract it implements"
		default:
			why = fmt.Sprintf("names contract %s, of a newer major than the contract %s this sparkui-fn writes for: a major may remove or rename settings, so sparkui cannot judge it", s.contract, cur)
		}
		need := "contract " + s.need.String() + " or newer of major " + fmt.Sprint(s.need.Major)
		if len(s.unknown) > 0 {
			need = "a contract newer than " + cur.String() + " (settings this sparkui-fn does not know: " + strings.Join(s.unknown, ", ") + ")"
		}
		out = append(out, Finding{Object: a.Object, Field: s.field,
			Msg: fmt.Sprintf("the runtime image %s %s. Its settings need %s; an older runtime idles or refuses and the application has no UI. "+
				"Check that it is the image of such a contract (e.g. its digest against %s's), or pin tag and digest together (%s@sha256:…)",
				s.image, why, need, s.repository()+":"+version.RuntimeTag(version.RuntimeContract), s.repository()+":"+version.RuntimeTag(version.RuntimeContract))})
	}
	return out
}
