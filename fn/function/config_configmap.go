package function

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/fieldpath"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/yamlx"
	"github.com/sparkui/sparkui/validate"
)

// configMapKeys maps the ConfigMap form's flat keys (pinned) to the typed form's fields.
var configMapKeys = map[string][]string{
	"mode":           {"spec", "mode"},
	"serviceEnabled": {"spec", "service", "enabled"},
	"serviceType":    {"spec", "service", "type"},
	"servicePort":    {"spec", "service", "port"},
	"externalURI":    {"spec", "service", "externalURI"},
	"runtimeImage":   {"spec", "runtime", "image"},
	"runtimeEvents":  {"spec", "runtime", "events"},
	"createRBAC":     {"spec", "rbac", "create"},
	// "<secret name>/<key>": the typed form's {name, key}.
	"authBearerSecret":  {"spec", "runtime", "auth", "bearerTokenSecret"},
	"authHeaderSecret":  {"spec", "runtime", "auth", "headerSecret"},
	"kubeflowInjection": {"spec", "kubeflow", "injection"},
	// The deprecated spelling of kubeflowInjection (deprecatedKubeflowRoute).
	"kubeflowRoute": {"spec", "kubeflow", "route"},
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
		case "enabled", "create", "grpc", "events":
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

// deprecatedKeys are read (with a warning) but no longer offered.
var deprecatedKeys = map[string]bool{"kubeflowRoute": true}

func knownKeys() []string {
	var ks []string
	for k := range configMapKeys {
		if !deprecatedKeys[k] {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}
