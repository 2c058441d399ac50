// Package policy writes the ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1,
// GA in Kubernetes 1.30) and their bindings that enforce, in a cluster, the rules of the
// catalog that look at one object: `sparkui-fn policy | kubectl apply -f -`. Everything in
// them (the match, the CEL, the message) comes from the rules' Admission entries and their
// catalog text; nothing is written twice.
package policy

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/validate"
)

// The objects' own labels and annotations.
const (
	AnnotationRule = "sparkui.dev/rule"
	APIVersion     = "admissionregistration.k8s.io/v1"
)

// Name is the policy (and binding) name of rule id's policy p.
func Name(id string, p validate.AdmissionPolicy) string {
	return "sparkui-" + strings.ToLower(id) + "-" + p.Name
}

// Action is the binding's validationAction for a rule of severity sev, "" when a rule of
// that severity is not enforced (an info).
func Action(sev framework.Severity) string {
	switch sev {
	case framework.Error:
		return "Deny"
	case framework.Warning:
		return "Warn"
	}
	return ""
}

// Enforced are the catalog's rules that have admission policies, in catalog order.
func Enforced() []validate.Rule {
	var out []validate.Rule
	for _, r := range validate.Rules {
		if len(r.Admission) > 0 && Action(r.Severity) != "" {
			out = append(out, r)
		}
	}
	return out
}

type meta struct {
	Name        string            `yaml:"name"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type object struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   meta   `yaml:"metadata"`
	Spec       any    `yaml:"spec"`
}

type resourceRule struct {
	APIGroups   []string `yaml:"apiGroups"`
	APIVersions []string `yaml:"apiVersions"`
	Resources   []string `yaml:"resources"`
	Operations  []string `yaml:"operations"`
}

type labelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

type matchResources struct {
	ResourceRules  []resourceRule `yaml:"resourceRules"`
	ObjectSelector *labelSelector `yaml:"objectSelector,omitempty"`
}

type expr struct {
	Name       string `yaml:"name,omitempty"`
	Expression string `yaml:"expression"`
	Message    string `yaml:"message,omitempty"`
	Reason     string `yaml:"reason,omitempty"`
}

type policySpec struct {
	FailurePolicy    string         `yaml:"failurePolicy"`
	MatchConstraints matchResources `yaml:"matchConstraints"`
	MatchConditions  []expr         `yaml:"matchConditions,omitempty"`
	Validations      []expr         `yaml:"validations"`
}

type bindingSpec struct {
	PolicyName        string   `yaml:"policyName"`
	ValidationActions []string `yaml:"validationActions"`
}

// Objects are the policies and bindings, a policy followed by its binding, rules in catalog
// order.
func Objects() []any {
	var out []any
	for _, r := range Enforced() {
		for _, p := range r.Admission {
			name := Name(r.ID, p)
			m := meta{Name: name,
				Labels:      map[string]string{names.LabelManagedBy: names.ManagedByValue},
				Annotations: map[string]string{AnnotationRule: r.ID}}
			ops := p.Operations
			if len(ops) == 0 {
				ops = []string{"CREATE", "UPDATE"}
			}
			spec := policySpec{
				// Fail: a request the expressions cannot judge is refused rather than let
				// through; the expressions guard every optional field with has().
				FailurePolicy: "Fail",
				MatchConstraints: matchResources{ResourceRules: []resourceRule{{
					APIGroups: []string{p.Group}, APIVersions: p.Versions, Resources: p.Resources, Operations: ops}}},
			}
			if len(p.ObjectLabels) > 0 {
				spec.MatchConstraints.ObjectSelector = &labelSelector{MatchLabels: p.ObjectLabels}
			}
			for _, c := range p.Conditions {
				spec.MatchConditions = append(spec.MatchConditions, expr{Name: c.Name, Expression: c.Expression})
			}
			for _, v := range p.Validations {
				spec.Validations = append(spec.Validations, expr{Expression: v, Message: r.AdmissionMessage(),
					// Forbidden (403): kubectl then prints "… is forbidden: … denied request:
					// [SUIxxx] …"; the default, Invalid, reads "… is invalid: : …" there.
					Reason: "Forbidden"})
			}
			out = append(out,
				object{APIVersion: APIVersion, Kind: "ValidatingAdmissionPolicy", Metadata: m, Spec: spec},
				object{APIVersion: APIVersion, Kind: "ValidatingAdmissionPolicyBinding", Metadata: m,
					Spec: bindingSpec{PolicyName: name, ValidationActions: []string{Action(r.Severity)}}})
		}
	}
	return out
}

// YAML is Objects as one YAML stream, what `sparkui-fn policy` prints.
func YAML() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# sparkui admission policies: `sparkui-fn policy | kubectl apply -f -` (docs/admission.md).\n")
	b.WriteString("# Generated from sparkui's rule catalog; rules: " + strings.Join(ids(), ", ") + ".\n")
	for i, o := range Objects() {
		if i > 0 {
			b.WriteString("---\n")
		}
		y, err := yaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		b.Write(y)
	}
	return b.Bytes(), nil
}

func ids() []string {
	var out []string
	for _, r := range Enforced() {
		out = append(out, r.ID)
	}
	sort.Strings(out)
	return out
}
