package function

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/util/validation"
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
	// KubeflowRoute is spec.kubeflow.route: "template" (default) or "webhook".
	KubeflowRoute string
}

func defaults() Config {
	return Config{
		Mode:          "transform",
		KubeflowRoute: "template",
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

// configMapKeys maps the ConfigMap form's flat keys (pinned) to the typed form's fields.
var configMapKeys = map[string][]string{
	"mode":           {"spec", "mode"},
	"serviceEnabled": {"spec", "service", "enabled"},
	"serviceType":    {"spec", "service", "type"},
	"servicePort":    {"spec", "service", "port"},
	"externalURI":    {"spec", "service", "externalURI"},
	"runtimeImage":   {"spec", "runtime", "image"},
	"createRBAC":     {"spec", "rbac", "create"},
	// "<secret name>/<key>": the typed form's {name, key}.
	"authBearerSecret": {"spec", "runtime", "auth", "bearerTokenSecret"},
	"authHeaderSecret": {"spec", "runtime", "auth", "headerSecret"},
	"kubeflowRoute":    {"spec", "kubeflow", "route"},
	// "namespace/name[/sectionName]", or a name alone: one parentRef.
	"routeKind":         {"spec", "route", "kind"},
	"routeHostname":     {"spec", "route", "hostname"},
	"routePathPrefix":   {"spec", "route", "pathPrefix"},
	"routeParentRef":    {"spec", "route", "parentRefs"},
	"routeIngressClass": {"spec", "route", "ingressClassName"},
	"routeTLSSecret":    {"spec", "route", "tls", "secretName"},
	"routeGRPC":         {"spec", "route", "grpc"},
	"routeGRPCHostname": {"spec", "route", "grpcHostname"},
	// The History Server hand-off (docs/history.md).
	"historyServerURL":      {"spec", "historyServer", "url"},
	"historyRedirectorPort": {"spec", "historyServer", "redirectorPort"},
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
	}
	if len(results) > 0 {
		sortResults(results)
		return cfg, results
	}
	return cfg, nil
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

// fromConfigMap converts the flat keys into the typed form, so one schema checks both.
// Keys starting with "spark." are Spark properties (the sparkConf fallback).
func fromConfigMap(fc *yaml.RNode, cfg *Config) (map[string]any, framework.Results) {
	typed := map[string]any{"apiVersion": names.ConfigGroup + "/v1alpha1", "kind": names.ConfigKind}
	results := configMapShape(fc)
	if len(results) > 0 {
		return typed, results
	}
	data := yamlx.Get(fc.YNode(), "data")
	yamlx.Pairs(data, func(k, v *yaml.Node) {
		if v.Kind != yaml.ScalarNode {
			results = append(results, validate.ConfigError(fc, fieldpath.Key("data", k.Value),
				fmt.Sprintf("is %s; a ConfigMap's data values are strings (%s: \"value\")", yamlx.Shape(v), k.Value)))
			return
		}
		key, val := k.Value, yamlx.Str(v)
		if strings.HasPrefix(key, "spark.") {
			if cfg.SparkConf == nil {
				cfg.SparkConf = map[string]string{}
			}
			cfg.SparkConf[key] = val
			return
		}
		path, ok := configMapKeys[key]
		if !ok {
			results = append(results, validate.ConfigError(fc, fieldpath.Key("data", key), unknownKeyMessage(key)))
			return
		}
		var value any = val
		switch path[len(path)-1] {
		case "bearerTokenSecret", "headerSecret":
			name, k, ok := strings.Cut(val, "/")
			if !ok || name == "" || k == "" || strings.Contains(k, "/") {
				results = append(results, validate.ConfigError(fc, fieldpath.Key("data", key), fmt.Sprintf("%q is not <secret name>/<key>", val)))
				return
			}
			value = map[string]any{"name": name, "key": k}
		case "parentRefs":
			ref, ok := parseParentRef(val)
			if !ok {
				results = append(results, validate.ConfigError(fc, fieldpath.Key("data", key), fmt.Sprintf("%q is not [<namespace>/]<name>[/<sectionName>]", val)))
				return
			}
			value = []any{ref}
		case "enabled", "create", "grpc":
			b, err := strconv.ParseBool(val)
			if err != nil {
				results = append(results, validate.ConfigError(fc, fieldpath.Key("data", key), fmt.Sprintf("%q is not true or false", val)))
				return
			}
			value = b
		case "port", "redirectorPort":
			p, err := strconv.Atoi(val)
			if err != nil {
				results = append(results, validate.ConfigError(fc, fieldpath.Key("data", key), fmt.Sprintf("%q is not an integer", val)))
				return
			}
			value = p
		}
		m := typed
		for _, p := range path[:len(path)-1] {
			next, _ := m[p].(map[string]any)
			if next == nil {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[path[len(path)-1]] = value
	})
	return typed, results
}

// configMapFields are the fields of a v1 ConfigMap sparkui accepts as its functionConfig:
// those kpt writes for `kpt fn eval -- key=value`, and immutable, which changes nothing here.
var configMapFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true, "data": true, "immutable": true}

// configMapShape checks what the ConfigMap form's keys hang from, each problem a result naming
// its field: read as it was, a data that is a list or a string (`data: [serviceType=NodePort]`)
// had no key to read, and every default applied without a word.
func configMapShape(fc *yaml.RNode) framework.Results {
	var out framework.Results
	n := fc.YNode()
	yamlx.Pairs(n, func(k, v *yaml.Node) {
		switch {
		case k.Value == "binaryData":
			out = append(out, validate.ConfigError(fc, "binaryData", "sparkui reads only data (string values); move the keys there"))
		case !configMapFields[k.Value]:
			out = append(out, validate.ConfigError(fc, k.Value, "unknown field; a ConfigMap functionConfig has apiVersion, kind, metadata and data"))
		}
	})
	if md := yamlx.Get(n, "metadata"); !yamlx.IsNull(md) && md.Kind != yaml.MappingNode {
		out = append(out, validate.ConfigError(fc, "metadata", fmt.Sprintf("is %s, not a mapping", yamlx.Shape(md))))
	}
	if data := yamlx.Get(n, "data"); !yamlx.IsNull(data) && data.Kind != yaml.MappingNode {
		out = append(out, validate.ConfigError(fc, "data", fmt.Sprintf("is %s, not a mapping of keys to string values "+
			"(data: {serviceType: NodePort}, or `kpt fn eval -- serviceType=NodePort`)", yamlx.Shape(data))))
	}
	return out
}

func knownKeys() []string {
	var ks []string
	for k := range configMapKeys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
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
	if v, ok := get("spec", "kubeflow", "route"); ok {
		cfg.KubeflowRoute = v.(string)
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
