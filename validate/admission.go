package validate

import (
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
	// celTemplateIsDriver: a workload whose pod template is labelled spark-role=driver, the
	// mark of a driver workload (internal/app detectWorkload).
	celTemplateIsDriver = `has(object.spec.template.metadata) && has(object.spec.template.metadata.labels) && ` +
		`'spark-role' in object.spec.template.metadata.labels && object.spec.template.metadata.labels['spark-role'] == 'driver'`
	celCronJobTemplateIsDriver = `has(object.spec.jobTemplate.spec) && has(object.spec.jobTemplate.spec.template.metadata) && ` +
		`has(object.spec.jobTemplate.spec.template.metadata.labels) && 'spark-role' in object.spec.jobTemplate.spec.template.metadata.labels && ` +
		`object.spec.jobTemplate.spec.template.metadata.labels['spark-role'] == 'driver'`
	// celIsOurUIService: a Service (already labelled managed-by sparkui, by the
	// objectSelector) with an application identity label, which is how the model finds a UI
	// Service (internal/app index.addService).
	celIsOurUIService = `has(object.metadata.labels) && ('spark-app-selector' in object.metadata.labels || 'sparkui.dev/application' in object.metadata.labels)`
)

var (
	admitWorkloads = []string{"deployments", "statefulsets"}
	opCreate       = []string{"CREATE"}
)

// sparkConfPolicies are one policy per operator resource that the carrier registry scopes by
// cap and note (app.AdmissionTargets), each validating the resource's sparkConf with valid
// (given the CEL path of the part that holds it): the adapters say where that part is.
func sparkConfPolicies(cap app.Capability, note string, valid func(spec string) string) []AdmissionPolicy {
	var out []AdmissionPolicy
	for _, t := range app.AdmissionTargets(cap, note) {
		out = append(out, AdmissionPolicy{Name: t.Scope.Name, Group: t.Group, Versions: t.Versions, Resources: []string{t.Resource},
			Validations: []string{t.Scope.Guard + valid(t.Scope.Spec)}})
	}
	return out
}
