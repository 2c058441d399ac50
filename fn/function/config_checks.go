package function

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/validate"
)

// checkKubeflowInjection reads the deprecated spelling of kubeflow.injection. It was
// kubeflow.route, one word with spec.route (the link users open) for another thing (where
// sparkui writes into a kubeflow SparkApplication); it is still read, with a warning naming
// the new field, until the next minor version removes it. Both spellings with different
// values cannot be resolved and are an error naming both.
func checkKubeflowInjection(fc *yaml.RNode, typed map[string]any, cfg *Config, pathOf func(string) string) framework.Results {
	kf, _ := typed["spec"].(map[string]any)
	kf, _ = kf["kubeflow"].(map[string]any)
	old, hasOld := kf["route"].(string)
	if !hasOld {
		return nil
	}
	oldField, newField := pathOf("/spec/kubeflow/route"), pathOf("/spec/kubeflow/injection")
	if cur, hasNew := kf["injection"].(string); hasNew {
		if cur != old {
			return framework.Results{validate.ConfigError(fc, oldField+", "+newField,
				fmt.Sprintf("%s is the deprecated spelling of %s and they disagree (%q, %q): keep %s alone", oldField, newField, old, cur, newField))}
		}
		return framework.Results{validate.ConfigDeprecated(fc, oldField,
			fmt.Sprintf("renamed %s, which is also set to the same value: remove %s", newField, oldField))}
	}
	cfg.KubeflowInjection = old
	return framework.Results{validate.ConfigDeprecated(fc, oldField,
		fmt.Sprintf("renamed %s (same values: template, webhook); the old name is read, with this warning, for one more minor version", newField))}
}

// checkAuth checks what the schema cannot say: one credential at most, and a Secret name and
// key the API server accepts (a DNS-1123 subdomain; a ConfigMap/Secret key).
func checkAuth(fc *yaml.RNode, auth sidecar.Auth, both bool, pathOf func(string) string) framework.Results {
	var out framework.Results
	if both {
		field := pathOf("/spec/runtime/auth")
		if b := pathOf("/spec/runtime/auth/bearerTokenSecret"); b != "spec.runtime.auth.bearerTokenSecret" {
			field = b + ", " + pathOf("/spec/runtime/auth/headerSecret") // the ConfigMap keys
		}
		out = append(out, validate.ConfigError(fc, field, "set one of bearerTokenSecret and headerSecret, not both"))
		return out
	}
	field := map[sidecar.AuthKind]string{sidecar.AuthBearer: "bearerTokenSecret", sidecar.AuthHeader: "headerSecret"}[auth.Kind]
	if field == "" {
		return nil
	}
	base := "/spec/runtime/auth/" + field
	if errs := validation.IsDNS1123Subdomain(auth.Secret); len(errs) > 0 {
		out = append(out, validate.ConfigError(fc, pathOf(base+"/name"), fmt.Sprintf("%q is not a Secret name: %s", auth.Secret, strings.Join(errs, "; "))))
	}
	if errs := validation.IsConfigMapKey(auth.Key); len(errs) > 0 {
		out = append(out, validate.ConfigError(fc, pathOf(base+"/key"), fmt.Sprintf("%q is not a Secret key: %s", auth.Key, strings.Join(errs, "; "))))
	}
	return out
}

// checkHistory checks what the schema cannot say of historyServer.url: an absolute http(s)
// URL the hand-off can append /history/<app id>/ to, without a query, fragment or
// credentials (it is published in an annotation).
func checkHistory(fc *yaml.RNode, h sidecar.History, pathOf func(string) string) framework.Results {
	if h.URL == "" {
		return nil
	}
	if err := sidecar.CheckHistoryURLLength(h.URL); err != nil {
		return framework.Results{validate.ConfigError(fc, pathOf("/spec/historyServer/url"), err.Error())}
	}
	if err := sidecar.CheckHistoryURL(h.URL); err != nil {
		return framework.Results{validate.ConfigError(fc, pathOf("/spec/historyServer/url"), err.Error())}
	}
	return nil
}

// checkImage refuses a runtime image that is not an image reference: it is written as the
// sidecar's image, so a value with a newline or spaces ("ghcr.io/x/y:1\n--evil") would reach
// every driver Pod as given. Parsed by go-containerregistry with its default (weak)
// validation, which accepts what the kubelet accepts: a name without registry is Docker Hub's,
// without tag ":latest" (name.StrictValidation would refuse both, and with them mirrors
// loaded under short names).
func checkImage(fc *yaml.RNode, image string, pathOf func(string) string) framework.Results {
	if _, err := name.ParseReference(image); err != nil {
		return framework.Results{validate.ConfigError(fc, pathOf("/spec/runtime/image"),
			fmt.Sprintf("%q is not an image reference ([registry/]repository[:tag][@sha256:digest]: a lowercase repository, a tag of letters, digits, '_', '.' and '-')", image))}
	}
	return nil
}
