package function

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
)

// TestRoleEveryCarrierAndURIMode: for every carrier fixture (and spark-submit Pods) and every
// external-URI mode with a Service type it works with, with Events on and off, each Role the
// function writes is exactly one rule, get and patch on services in the core group restricted
// by resourceNames to its own application's UI Service, plus (Events on) exactly create and
// patch on events.k8s.io events, and its RoleBinding binds that Role. Decoded as the
// API server reads it (rbac/v1 types), not compared as bytes: a rewritten golden cannot make
// a Role that reaches another Service pass.
//
// No mode needs more (docs/rbac.md): nodePort reads the nodePort from the bind's response and
// the node's address from the downward API (runtime/externaluri/nodeport.go), loadBalancer
// GETs the same Service (loadbalancer.go), annotation is an outside controller's job.
func TestRoleEveryCarrierAndURIMode(t *testing.T) {
	inputs, err := filepath.Glob("../../testdata/carrier-*/input.yaml")
	if err != nil || len(inputs) < 10 {
		t.Fatalf("carrier fixtures: %v, %v", inputs, err)
	}
	inputs = append(inputs, "../../testdata/random-port/input.yaml", "../../testdata/two-apps/input.yaml", "../../testdata/long-names/input.yaml")
	modes := []struct{ serviceType, uri string }{
		{"ClusterIP", string(sidecar.ExternalURINone)},
		{"ClusterIP", string(sidecar.ExternalURIAnnotation)},
		{"NodePort", string(sidecar.ExternalURINodePort)},
		{"LoadBalancer", string(sidecar.ExternalURINodePort)},
		{"LoadBalancer", string(sidecar.ExternalURILoadBalancer)},
	}
	for _, in := range inputs {
		items := readItems(t, in)
		routes := []string{"template"}
		if s := itemsString(t, items); strings.Contains(s, "sparkoperator.k8s.io/") {
			routes = append(routes, "webhook")
		}
		for _, route := range routes {
			for _, m := range modes {
				for _, events := range []bool{true, false} {
					t.Run(filepath.Base(filepath.Dir(in))+"/"+route+"/"+m.serviceType+"-"+m.uri+"/events="+strconv.FormatBool(events), func(t *testing.T) {
						fc := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sparkui}\ndata:\n  kubeflowInjection: " + route +
							"\n  serviceType: " + m.serviceType + "\n  externalURI: " + m.uri + "\n  runtimeEvents: \"" + strconv.FormatBool(events) + "\"\n"
						checkRoles(t, process(t, items, fc), events)
					})
				}
			}
		}
	}
}

// checkRoles: every UI Service in out has one Role and one RoleBinding of its application,
// the Role granting exactly get and patch on that Service (and, with events, create and patch
// on events.k8s.io events), and there is no other sparkui Role.
// Carriers of one name share the identity label (carrier-same-name): a Role may name any UI
// Service of its identity, each named by exactly one Role.
func checkRoles(t *testing.T, out []*yaml.RNode, events bool) {
	t.Helper()
	uiServices := map[string][]string{} // namespace + identity → its UI Services' names
	var roles []rbacv1.Role
	bindings := map[string]rbacv1.RoleBinding{} // namespace/name → binding
	for _, it := range out {
		l := app.Labels(it)
		if l[names.LabelManagedBy] != names.ManagedByValue {
			continue
		}
		ns, name := app.Meta(it)
		switch it.GetKind() {
		case "Service":
			uiServices[ns+"/"+identity(l)] = append(uiServices[ns+"/"+identity(l)], name)
		case "Role":
			var r rbacv1.Role
			decode(t, it, &r)
			roles = append(roles, r)
		case "RoleBinding":
			var b rbacv1.RoleBinding
			decode(t, it, &b)
			bindings[ns+"/"+name] = b
		}
	}
	granted := map[string]int{} // namespace/UI Service → Roles naming it
	for _, r := range roles {
		own := uiServices[r.Namespace+"/"+identity(r.Labels)]
		if len(r.Rules) == 0 || len(r.Rules[0].ResourceNames) != 1 || !slices.Contains(own, r.Rules[0].ResourceNames[0]) {
			t.Errorf("Role %s/%s grants %+v: want one rule naming one of its application's UI Services %v", r.Namespace, r.Name, r.Rules, own)
			continue
		}
		svc := r.Rules[0].ResourceNames[0]
		granted[r.Namespace+"/"+svc]++
		want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"services"},
			ResourceNames: []string{svc}, Verbs: []string{"get", "patch"}}}
		if events {
			want = append(want, rbacv1.PolicyRule{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}})
		}
		if !reflect.DeepEqual(r.Rules, want) {
			t.Errorf("Role %s/%s grants %+v, want exactly %+v", r.Namespace, r.Name, r.Rules, want)
		}
		b, ok := bindings[r.Namespace+"/"+r.Name]
		if !ok || b.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.Name}) ||
			len(b.Subjects) != 1 || b.Subjects[0].Kind != rbacv1.ServiceAccountKind {
			t.Errorf("Role %s/%s: binding %+v, want one of that name binding it to one ServiceAccount", r.Namespace, r.Name, b)
		}
	}
	n := 0
	for key, svcs := range uiServices {
		ns, _, _ := strings.Cut(key, "/")
		for _, svc := range svcs {
			n++
			if granted[ns+"/"+svc] != 1 {
				t.Errorf("UI Service %s/%s is named by %d Roles, want 1", ns, svc, granted[ns+"/"+svc])
			}
		}
	}
	if n == 0 {
		t.Fatal("no UI Service in the output")
	}
}

// identity is the application identity label's value an object sparkui added carries.
func identity(l map[string]string) string {
	if v := l[names.LabelAppSelector]; v != "" {
		return names.LabelAppSelector + "=" + v
	}
	return app.LabelApplication + "=" + l[app.LabelApplication]
}

// decode reads rn as the API server would (JSON into the API type).
func decode(t *testing.T, rn *yaml.RNode, into any) {
	t.Helper()
	b, err := rn.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("%s %s: %v", rn.GetKind(), rn.GetName(), err)
	}
}
