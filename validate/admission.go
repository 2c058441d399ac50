package validate

import (
	"maps"
	"slices"
	"strings"

	"github.com/sparkui/sparkui/internal/app"
)

// Admission is how a rule that looks at one object at a time is enforced in a cluster, by
// ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1, CEL) that `sparkui-fn policy`
// writes from the catalog: one policy and one binding per AdmissionPolicy. A rule whose
// finding needs more than one object (a Service and the Pod it selects, a Role and a
// RoleBinding, the conf in a ConfigMap next to its driver) has none: an admission request
// carries one object.
//
// The binding's validationActions follow the rule's severity: Deny for an error, Warn for a
// warning (the client shows it, the object is admitted); an info is never enforced.
type AdmissionPolicy struct {
	// Name tells the rule's policies apart: the policy is sparkui-<rule id>-<Name>.
	Name string
	// Group, Versions and Resources are the policy's one resourceRule.
	Group     string
	Versions  []string
	Resources []string
	// Operations default to CREATE and UPDATE.
	Operations []string
	// ObjectLabels is the objectSelector's matchLabels (spark-role: driver on Pods).
	ObjectLabels map[string]string
	// Conditions are the matchConditions (name → CEL, all true for the policy to apply):
	// what the rule's scope is where labels cannot say it (a workload's pod template).
	Conditions []AdmissionCondition
	// Validations are CEL expressions that are all true for an object the rule has nothing
	// against. The API server type-checks them against the matched resources' schemas.
	Validations []string
}

// AdmissionCondition is one matchCondition.
type AdmissionCondition struct {
	Name, Expression string
}

// AdmissionMessage is the message of r's policies: the rule id first, as in every result,
// then the catalog's title and fix, on one line (the API server refuses a message with a
// line break).
func (r Rule) AdmissionMessage() string {
	msg := "[" + r.ID + "] " + r.Title + ": " + r.Fix + " (" + HelpURI(r.ID) + ")"
	return strings.Join(strings.Fields(msg), " ")
}

// CEL fragments shared by the rules' policies.
const (
	// celIsOurUIService: a Service (already labelled managed-by sparkui, by the
	// objectSelector) with an application identity label, which is how the model finds a UI
	// Service (internal/app index.addService).
	celIsOurUIService = `has(object.metadata.labels) && ('spark-app-selector' in object.metadata.labels || 'sparkui.dev/application' in object.metadata.labels)`
	// driverCondition names the matchCondition that tells a carrier of a driver from another
	// object of its kind (app.Admission Driver: a workload's pod template labelled as a
	// driver's).
	driverCondition = "driver-template"
)

var opCreate = []string{"CREATE"}

// carrierPolicies are the policies of a rule over the carriers: one per adapter that
// app.AdmissionTargets(cap, note) lists and valid has a CEL validation for ("" when the
// carrier has nothing the rule checks), limited to the objects that carry a driver. The
// adapters say where everything is; a rule says what it checks. Adjacent targets of one
// family and API group whose policies would be the same share one, named after the family.
func carrierPolicies(cap app.Capability, note string, valid func(t app.AdmissionTarget) string) []AdmissionPolicy {
	var out []AdmissionPolicy
	var family string // of out's last policy, "" when it cannot be shared
	for _, t := range app.AdmissionTargets(cap, note) {
		v := valid(t)
		if v == "" {
			continue
		}
		p := AdmissionPolicy{Name: t.Name, Group: t.Group, Versions: t.Versions, Resources: []string{t.Resource},
			ObjectLabels: t.Labels, Validations: []string{v}}
		if t.Driver != "" {
			p.Conditions = []AdmissionCondition{{driverCondition, t.Driver}}
		}
		if n := len(out); n > 0 && t.Family != "" && t.Family == family && samePolicy(out[n-1], p) {
			out[n-1].Name = family
			out[n-1].Resources = append(out[n-1].Resources, t.Resource)
			continue
		}
		out, family = append(out, p), t.Family
	}
	return out
}

// samePolicy reports policies that differ at most in their names and resources.
func samePolicy(a, b AdmissionPolicy) bool {
	return a.Group == b.Group && slices.Equal(a.Versions, b.Versions) && slices.Equal(a.Operations, b.Operations) &&
		maps.Equal(a.ObjectLabels, b.ObjectLabels) && slices.Equal(a.Conditions, b.Conditions) && slices.Equal(a.Validations, b.Validations)
}

// sparkConfPolicies validate the sparkConf of every operator resource that the carrier
// registry scopes by cap and note, with valid (given the CEL path of the part that holds it).
func sparkConfPolicies(cap app.Capability, note string, valid func(spec string) string) []AdmissionPolicy {
	return carrierPolicies(cap, note, func(t app.AdmissionTarget) string {
		if t.Spec == "" {
			return ""
		}
		return t.Guard + valid(t.Spec)
	})
}

// podSpecPolicies validate the driver's pod spec of every carrier with capability cap whose
// adapter says where it is, with valid (given its CEL path, and the CEL path of the carrier's
// own field that puts the driver on the host network, "" when none). The adapter's guard
// admits an object without the pod spec, whose driver has nothing the rule checks.
func podSpecPolicies(cap app.Capability, valid func(spec, hostNetwork string) string) []AdmissionPolicy {
	return carrierPolicies(cap, "", func(t app.AdmissionTarget) string {
		if t.PodSpec == "" {
			return ""
		}
		return t.PodGuard + valid(t.PodSpec, t.HostNetwork)
	})
}

// replicasPolicies validate the field that runs several driver Pods at once (a workload's
// replicas or parallelism) of every carrier with capability cap that has one, with valid
// (given its CEL path).
func replicasPolicies(cap app.Capability, valid func(field string) string) []AdmissionPolicy {
	return carrierPolicies(cap, "", func(t app.AdmissionTarget) string {
		if t.Replicas == "" {
			return ""
		}
		return valid(t.Replicas)
	})
}
