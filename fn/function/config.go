package function

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/internal/yamlx"
	"github.com/sparkui/sparkui/transform"
	"github.com/sparkui/sparkui/validate"
)

// Config is the functionConfig with defaults applied.
type Config struct {
	Mode      string
	Transform transform.Options
	SparkConf map[string]string
	// authBoth: both credentials were set (an error checkAuth reports).
	authBoth bool
	// KubeflowInjection is spec.kubeflow.injection (formerly spec.kubeflow.route): "template"
	// (default) or "webhook".
	KubeflowInjection string
}

func defaults() Config {
	return Config{
		Mode:              "transform",
		KubeflowInjection: "template",
		Transform: transform.Options{
			ServiceEnabled: true,
			ServiceType:    "ClusterIP",
			ExternalURI:    sidecar.ExternalURINone,
			RuntimeImage:   version.RuntimeImage(),
			CreateRBAC:     true,
			Route:          transform.RouteOptions{Kind: transform.RouteNone, PathPrefix: "/"},
			History:        sidecar.History{RedirectorPort: sidecar.DefaultRedirectorPort},
		},
	}
}

// LoadConfig reads the functionConfig in either form. Any problem is a SUI014 result naming
// the field (as the user wrote it: a spec path, or a ConfigMap key), and the defaults are
// not to be used then.
func LoadConfig(fc *yaml.RNode) (Config, framework.Results) {
	cfg := defaults()
	if fc == nil || fc.YNode() == nil || fc.IsNilOrEmpty() {
		return cfg, nil
	}
	n := fc.YNode()
	if n.Kind != yaml.MappingNode {
		return cfg, framework.Results{validate.ConfigError(nil, "functionConfig", "not a mapping")}
	}
	av, kind := yamlx.GetStr(n, "apiVersion"), yamlx.GetStr(n, "kind")
	var typed map[string]any
	var pathOf func(instance string) string
	var results framework.Results
	switch {
	case av == "v1" && kind == "ConfigMap":
		typed, results = fromConfigMap(fc, &cfg)
		pathOf = func(inst string) string {
			for key, p := range configMapKeys {
				if pp := "/" + strings.Join(p, "/"); inst == pp || strings.HasPrefix(inst, pp+"/") {
					return fieldpath.Key("data", key)
				}
			}
			return fieldpath.FromJSONPointer(inst)
		}
	case strings.HasPrefix(av, names.ConfigGroup+"/") || kind == names.ConfigKind:
		b, err := fc.MarshalJSON()
		if err == nil {
			err = json.Unmarshal(b, &typed)
		}
		if err != nil {
			return cfg, framework.Results{validate.ConfigError(fc, "functionConfig", err.Error())}
		}
		pathOf = fieldpath.FromJSONPointer
	default:
		return cfg, framework.Results{validate.ConfigError(fc, "kind",
			fmt.Sprintf("unsupported functionConfig %s %s: use %s/v1alpha1 %s or a v1 ConfigMap", av, kind, names.ConfigGroup, names.ConfigKind))}
	}
	for _, e := range validateSchema(typed) {
		field, msg := describe(e, pathOf)
		results = append(results, validate.ConfigError(fc, field, msg))
	}
	if len(results) == 0 {
		applyTyped(typed, &cfg)
		results = checkAuth(fc, cfg.Transform.RuntimeAuth, cfg.authBoth, pathOf)
		results = append(results, checkRoute(fc, cfg.Transform.Route, pathOf)...)
		results = append(results, checkHistory(fc, cfg.Transform.History, pathOf)...)
		results = append(results, checkImage(fc, cfg.Transform.RuntimeImage, pathOf)...)
		results = append(results, checkKubeflowInjection(fc, typed, &cfg, pathOf)...)
	}
	if len(results) > 0 {
		sortResults(results)
		return cfg, results
	}
	return cfg, nil
}

// HasError says whether LoadConfig's results refuse the functionConfig: a deprecation is a
// warning, and the configuration it comes with is used.
func HasError(results framework.Results) bool {
	for _, r := range results {
		if r.Severity == framework.Error {
			return true
		}
	}
	return false
}

func applyTyped(typed map[string]any, cfg *Config) {
	get := func(path ...string) (any, bool) {
		var cur any = typed
		for _, p := range path {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[p]; !ok {
				return nil, false
			}
		}
		return cur, true
	}
	if v, ok := get("spec", "mode"); ok {
		cfg.Mode = v.(string)
	}
	if v, ok := get("spec", "service", "enabled"); ok {
		cfg.Transform.ServiceEnabled = v.(bool)
	}
	if v, ok := get("spec", "service", "type"); ok {
		cfg.Transform.ServiceType = v.(string)
	}
	if v, ok := get("spec", "service", "port"); ok {
		switch n := v.(type) {
		case float64:
			cfg.Transform.ServicePort = int(n)
		case int:
			cfg.Transform.ServicePort = n
		}
	}
	if v, ok := get("spec", "service", "externalURI"); ok {
		cfg.Transform.ExternalURI = sidecar.ExternalURIMode(v.(string))
	}
	if v, ok := get("spec", "runtime", "image"); ok {
		cfg.Transform.RuntimeImage = v.(string)
	}
	if v, ok := get("spec", "runtime", "events"); ok {
		cfg.Transform.NoEvents = !v.(bool)
	}
	bearer, hasBearer := get("spec", "runtime", "auth", "bearerTokenSecret")
	header, hasHeader := get("spec", "runtime", "auth", "headerSecret")
	cfg.authBoth = hasBearer && hasHeader
	secretRef := func(kind sidecar.AuthKind, v any) sidecar.Auth {
		m := v.(map[string]any)
		return sidecar.Auth{Kind: kind, Secret: m["name"].(string), Key: m["key"].(string)}
	}
	switch {
	case hasBearer:
		cfg.Transform.RuntimeAuth = secretRef(sidecar.AuthBearer, bearer)
	case hasHeader:
		cfg.Transform.RuntimeAuth = secretRef(sidecar.AuthHeader, header)
	}
	if v, ok := get("spec", "rbac", "create"); ok {
		cfg.Transform.CreateRBAC = v.(bool)
	}
	applyRoute(get, &cfg.Transform.Route)
	// The deprecated spec.kubeflow.route is read by checkKubeflowInjection.
	if v, ok := get("spec", "kubeflow", "injection"); ok {
		cfg.KubeflowInjection = v.(string)
	}
	if v, ok := get("spec", "historyServer", "url"); ok {
		cfg.Transform.History.URL = v.(string)
	}
	if v, ok := get("spec", "historyServer", "redirectorPort"); ok {
		switch n := v.(type) {
		case float64:
			cfg.Transform.History.RedirectorPort = int(n)
		case int:
			cfg.Transform.History.RedirectorPort = n
		}
	}
	if v, ok := get("spec", "sparkConf"); ok {
		for k, val := range v.(map[string]any) {
			if cfg.SparkConf == nil {
				cfg.SparkConf = map[string]string{}
			}
			cfg.SparkConf[k] = scalarString(val)
		}
	}
}

// scalarString renders a sparkConf value the way it would read in spark.properties.
func scalarString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	}
	return fmt.Sprint(v)
}

var additionalProp = regexp.MustCompile(`^additionalProperties (.+) not allowed$`)

// describe names the field at fault: an unknown field is reported at its own path, not its
// parent's.
func describe(leaf schemaError, pathOf func(string) string) (string, string) {
	if m := additionalProp.FindStringSubmatch(leaf.Message); m != nil {
		var fields []string
		for _, f := range strings.Split(m[1], ", ") {
			fields = append(fields, strings.Trim(f, "'"))
		}
		parent := pathOf(leaf.InstanceLocation)
		return fieldpath.Key(parent, strings.Join(fields, ", ")), unknownFieldsMessage(leaf.InstanceLocation, fields)
	}
	field := pathOf(leaf.InstanceLocation)
	if field == "" {
		field = "functionConfig"
	}
	return field, leaf.Message
}

func sortResults(rs framework.Results) {
	sort.SliceStable(rs, func(i, j int) bool {
		return rs[i].Field != nil && rs[j].Field != nil && rs[i].Field.Path < rs[j].Field.Path
	})
}
