package function

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/version"
)

// configErrors loads doc as the functionConfig and lists its results as
// "<field path> | <message>".
func configErrors(t *testing.T, doc string) (Config, []string) {
	t.Helper()
	fc, err := yaml.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, results := LoadConfig(fc)
	var got []string
	for _, r := range results {
		path := ""
		if r.Field != nil {
			path = r.Field.Path
		}
		if r.Tags["rule"] != "SUI014" {
			t.Errorf("result tagged %v, want SUI014: %s", r.Tags, r.Message)
		}
		got = append(got, path+" | "+r.Message)
	}
	return cfg, got
}

// TestConfigMapShape: a ConfigMap functionConfig whose data (or metadata) is not a mapping, a
// data value that is not a string, and a field a ConfigMap has not are each an error naming
// the field. Read as they were, none had a key to read: every default applied, exit 0.
func TestConfigMapShape(t *testing.T) {
	const head = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
	const mapping = " not a mapping of keys to string values (data: {serviceType: NodePort}, or `kpt fn eval -- serviceType=NodePort`)"
	for _, tc := range []struct {
		name, doc string
		errors    []string
	}{
		{"data a list", head + "data: [serviceType=NodePort]\n",
			[]string{"data | [SUI014] invalid functionConfig: data: is a list," + mapping}},
		{"data a string", head + "data: serviceType=NodePort\n",
			[]string{`data | [SUI014] invalid functionConfig: data: is the scalar "serviceType=NodePort",` + mapping}},
		{"data a number", head + "data: 7\n",
			[]string{`data | [SUI014] invalid functionConfig: data: is the scalar "7",` + mapping}},
		{"metadata a list", "apiVersion: v1\nkind: ConfigMap\nmetadata: [c]\ndata: {serviceType: NodePort}\n",
			[]string{"metadata | [SUI014] invalid functionConfig: metadata: is a list, not a mapping"}},
		{"metadata a string", "apiVersion: v1\nkind: ConfigMap\nmetadata: c\n",
			[]string{`metadata | [SUI014] invalid functionConfig: metadata: is the scalar "c", not a mapping`}},
		{"a value a list", head + "data:\n  serviceType: [NodePort]\n",
			[]string{`data.serviceType | [SUI014] invalid functionConfig: data.serviceType: is a list; a ConfigMap's data values are strings (serviceType: "value")`}},
		{"a spark property a mapping", head + "data:\n  spark.ui.port: {port: 4041}\n",
			[]string{`data["spark.ui.port"] | [SUI014] invalid functionConfig: data["spark.ui.port"]: is a mapping; a ConfigMap's data values are strings (spark.ui.port: "value")`}},
		{"spec on a ConfigMap", head + "spec:\n  service: {type: NodePort}\n",
			[]string{"spec | [SUI014] invalid functionConfig: spec: unknown field; a ConfigMap functionConfig has apiVersion, kind, metadata and data"}},
		{"binaryData", head + "binaryData:\n  serviceType: Tm9kZVBvcnQ=\n",
			[]string{"binaryData | [SUI014] invalid functionConfig: binaryData: sparkui reads only data (string values); move the keys there"}},
		{"empty data", head + "data:\n", nil},
		{"no metadata, immutable", "apiVersion: v1\nkind: ConfigMap\nimmutable: true\ndata: {serviceType: NodePort}\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := configErrors(t, tc.doc)
			if d := cmp.Diff(tc.errors, got); d != "" {
				t.Errorf("results (-want +got):\n%s", d)
			}
		})
	}
}

// TestTypedConfigShape: the typed form's wrong shapes are named by the schema.
func TestTypedConfigShape(t *testing.T) {
	const head = "apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\n"
	for _, tc := range []struct{ doc, want string }{
		{head + "metadata: {name: s}\nspec: [transform]\n", "spec | [SUI014] invalid functionConfig: spec: expected object, but got array"},
		{head + "metadata: [s]\n", "metadata | [SUI014] invalid functionConfig: metadata: expected object, but got array"},
		{head + "metadata: {name: s}\nspec: {service: NodePort}\n", "spec.service | [SUI014] invalid functionConfig: spec.service: expected object, but got string"},
		{head + "metadata: {name: s}\ndata: {serviceType: NodePort}\n", "data | [SUI014] invalid functionConfig: data: unknown field. Valid fields here: apiVersion, kind, metadata, spec"},
	} {
		_, got := configErrors(t, tc.doc)
		if d := cmp.Diff([]string{tc.want}, got); d != "" {
			t.Errorf("%s: results (-want +got):\n%s", tc.doc, d)
		}
	}
}

// TestRuntimeImageReference: the runtime image is written into every driver Pod, so a value that
// is not an image reference is an error naming the field in either form; references the
// kubelet accepts pass as written.
func TestRuntimeImageReference(t *testing.T) {
	const typed = "apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nmetadata: {name: s}\nspec:\n  runtime:\n    image: "
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata:\n  runtimeImage: "
	const why = " is not an image reference ([registry/]repository[:tag][@sha256:digest]: a lowercase repository, a tag of letters, digits, '_', '.' and '-')"
	for _, tc := range []struct{ doc, want string }{
		{typed + `"ghcr.io/x/y:1\n--evil"` + "\n", `spec.runtime.image | [SUI014] invalid functionConfig: spec.runtime.image: "ghcr.io/x/y:1\n--evil"` + why},
		{cm + `"ghcr.io/x/y:1\n--evil"` + "\n", `data.runtimeImage | [SUI014] invalid functionConfig: data.runtimeImage: "ghcr.io/x/y:1\n--evil"` + why},
		{cm + `"ghcr.io/x/y:1 --evil"` + "\n", `data.runtimeImage | [SUI014] invalid functionConfig: data.runtimeImage: "ghcr.io/x/y:1 --evil"` + why},
		{typed + "Ghcr.io/Sparkui/Runtime:1\n", `spec.runtime.image | [SUI014] invalid functionConfig: spec.runtime.image: "Ghcr.io/Sparkui/Runtime:1"` + why},
		{typed + "https://ghcr.io/x/y:1\n", `spec.runtime.image | [SUI014] invalid functionConfig: spec.runtime.image: "https://ghcr.io/x/y:1"` + why},
		{typed + "ghcr.io/x/y@sha256:abc\n", `spec.runtime.image | [SUI014] invalid functionConfig: spec.runtime.image: "ghcr.io/x/y@sha256:abc"` + why},
		{typed + "registry.local:5000/team/sparkui-runtime:0.1.0\n", ""},
		{cm + "sparkui-runtime\n", ""},
		{typed + "ghcr.io/sparkui/sparkui-runtime:0.1.0@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n", ""},
	} {
		cfg, got := configErrors(t, tc.doc)
		var want []string
		if tc.want != "" {
			want = []string{tc.want}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: results (-want +got):\n%s", tc.doc, d)
		}
		if tc.want == "" && cfg.Transform.RuntimeImage == version.RuntimeImage() {
			t.Errorf("%s: the image is still the default", tc.doc)
		}
	}
	if _, got := configErrors(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n"); len(got) != 0 {
		t.Errorf("the default image is refused: %v", got)
	}
}
