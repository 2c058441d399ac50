package app

import (
	"maps"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/names"
)

// TestAdmissionAgreesWithAdapter: what an adapter declares for the admission policies (CEL
// paths, how a driver is told) is where the adapter's own reading finds it, and a sample
// object that sets the replicas and overlap fields those policies refuse is a carrier the
// model reports for the same fields (SUI035, SUI036).
func TestAdmissionAgreesWithAdapter(t *testing.T) {
	var seen int
	for _, a := range Adapters {
		ad := a.admission
		name := a.objectKind + " " + a.group
		// Every carrier gets the policies of the rules that look at its driver's pod spec
		// or at its sparkConf (by capability or note).
		if a.podSpec != nil && (ad == nil || ad.PodSpec == "") {
			t.Errorf("%s: a driver pod spec, none for admission", name)
		}
		if (a.caps&CapSparkSubmitsFromConf != 0 || len(a.notes) > 0) && (ad == nil || ad.Spec == "") {
			t.Errorf("%s: an operator's sparkConf, none for admission", name)
		}
		if ad == nil {
			continue
		}
		seen++
		if ad.Name == "" {
			t.Errorf("%s: admission without a name", name)
		}
		if ad.PodSpec != "" && ad.PodSpec != celPath(cat(a.base, a.podSpec...)) {
			t.Errorf("%s: admission PodSpec %s, the adapter's pod spec is %s", name, ad.PodSpec, celPath(cat(a.base, a.podSpec...)))
		}
		if ad.Spec != "" && ad.Spec != celPath(a.base) {
			t.Errorf("%s: admission Spec %s, the adapter's base is %s", name, ad.Spec, celPath(a.base))
		}
		if ad.Guard != "" && (ad.Spec == "" || ad.Guard != "!has("+ad.Spec+") || ") {
			t.Errorf("%s: Guard %q does not guard Spec %q", name, ad.Guard, ad.Spec)
		}
		for _, p := range []string{ad.PodRequired, ad.PodOpen} {
			if p != "" && !strings.HasPrefix(ad.PodSpec, p+".") {
				t.Errorf("%s: %s is not above PodSpec %s", name, p, ad.PodSpec)
			}
		}
		if ad.Driver != "" && !strings.Contains(ad.Driver, celPath(a.base)+".metadata.labels['"+names.LabelSparkRole+"'] == '"+names.RoleDriver+"'") {
			t.Errorf("%s: Driver %q does not test the template at %s", name, ad.Driver, celPath(a.base))
		}
		if ad.Labels != nil && !maps.Equal(ad.Labels, map[string]string{names.LabelSparkRole: names.RoleDriver}) {
			t.Errorf("%s: Labels %v", name, ad.Labels)
		}
		if ad.ClientMode != "" && a.fields[FieldDeployMode] == nil {
			t.Errorf("%s: ClientMode without a deploy mode field", name)
		}
		// Samples on the host network by each field admission reads for it (SUI011): the
		// model reads them so.
		if ad.PodSpec != "" {
			for _, field := range []string{ad.PodSpec + ".hostNetwork", admissionTarget(a).HostNetwork} {
				if field == "" {
					continue
				}
				obj := sample(a)
				set(obj, strings.Split(strings.TrimPrefix(field, "object."), "."), true)
				rn, err := yaml.FromMap(obj)
				if err != nil {
					t.Fatal(err)
				}
				if c, err := DetectCarrier(rn, CarrierOptions{}); err != nil || c == nil || !c.HostNetwork {
					t.Errorf("%s: %s true, the model's carrier (%v) is not on the host network:\n%s", name, field, err, rn.MustString())
				}
			}
		}
		if a.replicas == nil && ad.Overlap == nil {
			continue
		}

		// A sample with both fields set: the model reads them where admission does.
		obj := sample(a)
		if a.replicas != nil {
			set(obj, a.replicas, 3)
		}
		if ad.Overlap != nil {
			set(obj, strings.Split(strings.TrimPrefix(ad.Overlap.Field, "object."), "."), ad.Overlap.Overlaps)
		}
		rn, err := yaml.FromMap(obj)
		if err != nil {
			t.Fatal(err)
		}
		c, err := DetectCarrier(rn, CarrierOptions{})
		if err != nil || c == nil {
			t.Errorf("%s: sample not a carrier (%v):\n%s", name, err, rn.MustString())
			continue
		}
		if a.replicas != nil && (c.Replicas != 3 || "object."+c.ReplicasPath != admissionReplicas(a)) {
			t.Errorf("%s: Replicas %d at %s, admission bounds %s", name, c.Replicas, c.ReplicasPath, admissionReplicas(a))
		}
		if ad.Overlap != nil && (c.Overlap == nil || "object."+c.Overlap.Field != ad.Overlap.Field) {
			t.Errorf("%s: Overlap %+v, admission refuses %s %s", name, c.Overlap, ad.Overlap.Field, ad.Overlap.Overlaps)
		}
	}
	if seen != len(Adapters) {
		t.Errorf("%d of %d adapters declare an admission", seen, len(Adapters))
	}
}

// sample is a driver carrier of adapter a: its pod template labelled as a driver's, with a
// driver container.
func sample(a *Adapter) map[string]any {
	obj := map[string]any{"apiVersion": apiVersion(a.group, a.versions[0]), "kind": a.objectKind,
		"metadata": map[string]any{"name": "x", "namespace": "ns"}}
	set(obj, cat(a.base, "metadata", "labels", names.LabelSparkRole), names.RoleDriver)
	set(obj, cat(a.base, a.podSpec...), map[string]any{"containers": []any{map[string]any{"name": names.DriverContainer, "image": "spark"}}})
	return obj
}

// admissionTarget is what AdmissionTargets gives of a.
func admissionTarget(a *Adapter) AdmissionTarget {
	for _, t := range AdmissionTargets(a.caps, "") {
		if t.Group == a.group && t.Resource == a.resource {
			return t
		}
	}
	return AdmissionTarget{}
}

// admissionReplicas is the CEL path AdmissionTargets gives a's replicas.
func admissionReplicas(a *Adapter) string { return admissionTarget(a).Replicas }

// set puts v at path in m, making the maps on the way.
func set(m map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}
