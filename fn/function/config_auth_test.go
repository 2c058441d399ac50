package function

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/sidecar"
)

// TestLoadConfigRuntimeAuth: the runtime's credential in both forms, and every way to get it
// wrong named by its field.
func TestLoadConfigRuntimeAuth(t *testing.T) {
	const typed = "apiVersion: sparkui.dev/v1alpha1\nkind: SparkUIService\nmetadata: {name: s}\nspec:\n  runtime:\n    auth:\n"
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata:\n"
	for _, tc := range []struct {
		name, doc string
		want      sidecar.Auth
		errors    []string // "<field path> | <message>"
	}{
		{"typed bearer", typed + "      bearerTokenSecret: {name: spark-ui-jws, key: token}\n",
			sidecar.Auth{Kind: sidecar.AuthBearer, Secret: "spark-ui-jws", Key: "token"}, nil},
		{"typed header", typed + "      headerSecret: {name: ui-cookie, key: header.txt}\n",
			sidecar.Auth{Kind: sidecar.AuthHeader, Secret: "ui-cookie", Key: "header.txt"}, nil},
		{"configmap bearer", cm + "  authBearerSecret: spark-ui-jws/token\n",
			sidecar.Auth{Kind: sidecar.AuthBearer, Secret: "spark-ui-jws", Key: "token"}, nil},
		{"configmap header", cm + "  authHeaderSecret: ui-cookie/header\n",
			sidecar.Auth{Kind: sidecar.AuthHeader, Secret: "ui-cookie", Key: "header"}, nil},
		{"none", cm + "  mode: validate\n", sidecar.Auth{}, nil},
		{"typed both", typed + "      bearerTokenSecret: {name: a, key: b}\n      headerSecret: {name: c, key: d}\n", sidecar.Auth{},
			[]string{"spec.runtime.auth | [SUI014] invalid functionConfig: spec.runtime.auth: set one of bearerTokenSecret and headerSecret, not both"}},
		{"configmap both", cm + "  authBearerSecret: a/b\n  authHeaderSecret: c/d\n", sidecar.Auth{},
			[]string{"data.authBearerSecret, data.authHeaderSecret | [SUI014] invalid functionConfig: data.authBearerSecret, data.authHeaderSecret: set one of bearerTokenSecret and headerSecret, not both"}},
		{"typed bad name and key", typed + "      bearerTokenSecret: {name: Spark_JWS, key: 'a/b'}\n", sidecar.Auth{},
			[]string{
				`spec.runtime.auth.bearerTokenSecret.key | [SUI014] invalid functionConfig: spec.runtime.auth.bearerTokenSecret.key: "a/b" is not a Secret key: a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
				`spec.runtime.auth.bearerTokenSecret.name | [SUI014] invalid functionConfig: spec.runtime.auth.bearerTokenSecret.name: "Spark_JWS" is not a Secret name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			}},
		{"typed missing key", typed + "      headerSecret: {name: a}\n", sidecar.Auth{},
			[]string{"spec.runtime.auth.headerSecret | [SUI014] invalid functionConfig: spec.runtime.auth.headerSecret: missing properties: 'key'"}},
		{"configmap not name/key", cm + "  authBearerSecret: spark-ui-jws\n", sidecar.Auth{},
			[]string{`data.authBearerSecret | [SUI014] invalid functionConfig: data.authBearerSecret: "spark-ui-jws" is not <secret name>/<key>`}},
		{"configmap bad name", cm + "  authHeaderSecret: UI/header\n", sidecar.Auth{},
			[]string{`data.authHeaderSecret | [SUI014] invalid functionConfig: data.authHeaderSecret: "UI" is not a Secret name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc, err := yaml.Parse(tc.doc)
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
				got = append(got, path+" | "+r.Message)
			}
			if d := cmp.Diff(tc.errors, got); d != "" {
				t.Errorf("results (-want +got):\n%s", d)
			}
			if len(tc.errors) == 0 && cfg.Transform.RuntimeAuth != tc.want {
				t.Errorf("RuntimeAuth = %+v, want %+v", cfg.Transform.RuntimeAuth, tc.want)
			}
		})
	}
}
