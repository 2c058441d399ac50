package validate

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
)

const sui007App = `apiVersion: v1
kind: Pod
metadata:
  name: app-driver
  namespace: ns
  labels: {spark-role: driver, spark-app-selector: spark-1}
spec:
  serviceAccountName: sa
  containers: [{name: spark-kubernetes-driver}]
---
apiVersion: v1
kind: Service
metadata:
  name: app-ui-svc
  namespace: ns
  labels: {app.kubernetes.io/managed-by: sparkui, spark-app-selector: spark-1}
spec:
  ports: [{name: spark-ui, port: 4040, targetPort: 4040}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: b}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: a}
subjects: [{kind: ServiceAccount, name: sa, namespace: ns}]
`

// TestSUI007Aggregation covers what the fixtures do not: aggregation cycles end, selectors
// with matchExpressions, and an aggregated role's inline rules never count.
func TestSUI007Aggregation(t *testing.T) {
	grant := "rules: [{apiGroups: [\"\"], resources: [services], verbs: [get, patch]}]"
	for _, tc := range []struct {
		name    string
		roles   string
		allowed bool
	}{
		{"plain", "kind: ClusterRole\nmetadata: {name: a}\n" + grant, true},
		{"cycle without grant", `kind: ClusterRole
metadata: {name: a, labels: {x: "1"}}
aggregationRule: {clusterRoleSelectors: [{matchLabels: {y: "1"}}]}
---
kind: ClusterRole
metadata: {name: b, labels: {y: "1"}}
aggregationRule: {clusterRoleSelectors: [{matchLabels: {x: "1"}}]}`, false},
		{"cycle with a granting member", `kind: ClusterRole
metadata: {name: a, labels: {x: "1"}}
aggregationRule: {clusterRoleSelectors: [{matchLabels: {y: "1"}}]}
---
kind: ClusterRole
metadata: {name: b, labels: {y: "1"}}
aggregationRule: {clusterRoleSelectors: [{matchLabels: {x: "1"}}, {matchLabels: {z: "1"}}]}
---
kind: ClusterRole
metadata: {name: c, labels: {z: "1"}}
` + grant, true},
		{"matchExpressions", `kind: ClusterRole
metadata: {name: a}
aggregationRule: {clusterRoleSelectors: [{matchExpressions: [{key: tier, operator: In, values: [ui, web]}]}]}
---
kind: ClusterRole
metadata: {name: c, labels: {tier: web}}
` + grant, true},
		{"inline rules of an aggregated role", `kind: ClusterRole
metadata: {name: a}
aggregationRule: {clusterRoleSelectors: [{matchLabels: {none: "1"}}]}
` + grant, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var docs []string
			for _, d := range strings.Split(tc.roles, "\n---\n") {
				docs = append(docs, "apiVersion: rbac.authorization.k8s.io/v1\n"+d)
			}
			items, err := (&kio.ByteReader{Reader: strings.NewReader(sui007App + "---\n" + strings.Join(docs, "\n---\n"))}).Read()
			if err != nil {
				t.Fatal(err)
			}
			got := checkSUI007(&Context{Model: app.BuildWith(items, app.CarrierOptions{})})
			if allowed := len(got) == 0; allowed != tc.allowed {
				t.Errorf("allowed = %v, want %v (%v)", allowed, tc.allowed, got)
			}
		})
	}
}

// TestLabelSelector: the selector read without meta/v1 keeps LabelSelectorAsSelector's meaning.
func TestLabelSelector(t *testing.T) {
	set := map[string]string{"tier": "ui", "team": "a"}
	for _, c := range []struct {
		sel         string
		ok, matches bool
	}{
		{`{}`, true, true}, // an empty selector matches everything
		{`{matchLabels: null}`, true, true},
		{`{matchLabels: {tier: ui}}`, true, true},
		{`{matchLabels: {tier: web}}`, true, false},
		{`{matchExpressions: [{key: tier, operator: In, values: [web, ui]}]}`, true, true},
		{`{matchExpressions: [{key: tier, operator: NotIn, values: [ui]}]}`, true, false},
		{`{matchExpressions: [{key: team, operator: Exists}]}`, true, true},
		{`{matchExpressions: [{key: team, operator: DoesNotExist}]}`, true, false},
		{`{matchLabels: {tier: ui}, matchExpressions: [{key: x, operator: Exists}]}`, true, false},
		{`{matchExpressions: [{key: tier, operator: Near, values: [ui]}]}`, false, false},
		{`{matchExpressions: [{key: tier, operator: In}]}`, false, false}, // In needs values
		{`{matchLabels: [tier]}`, false, false},
		{`[]`, false, false},
	} {
		sel, ok := labelSelector(yaml.MustParse(c.sel).YNode())
		if ok != c.ok {
			t.Errorf("%s: ok = %v, want %v", c.sel, ok, c.ok)
			continue
		}
		if ok && sel.Matches(labels.Set(set)) != c.matches {
			t.Errorf("%s: matches = %v, want %v", c.sel, !c.matches, c.matches)
		}
	}
}
