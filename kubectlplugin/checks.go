package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
	"github.com/sparkui/sparkui/kubectlplugin/uistate"
	"github.com/sparkui/sparkui/validate"
)

// liveRules are the rules that judge what runs: RBAC, the runtime's settings against the
// application, TLS, IP families, hostNetwork ports, filters and redaction, a foreign preStop.
// The others judge manifests before they are applied (a selector or targetPort declared,
// duplicates, Flux's policy, objects missing from the input, SUI060's "never transformed",
// the --baseline rules), and on live objects they would report what the runtime rightly wrote
// or what this command did not fetch.
var liveRules = map[string]bool{
	"SUI005": true, "SUI007": true, "SUI008": true, "SUI009": true, "SUI010": true, "SUI011": true,
	"SUI012": true, "SUI015": true, "SUI016": true, "SUI017": true, "SUI022": true, "SUI023": true,
	"SUI024": true, "SUI061": true,
}

// checks runs sparkui's rules on the live objects of a: the carrier (a spark-submit Pod, or
// the workload at the top of the Pod's controller chain), its Spark conf ConfigMaps, the UI
// Service without what the runtime writes (app.RuntimeOwnedFields, the selector and the
// bound-pod label), the driver Services, and the namespace's Roles and RoleBindings with the
// ClusterRoles they name. note says why no check ran, when none did.
func checks(ctx context.Context, cs kubernetes.Interface, a *uistate.App) (results framework.Results, note string, err error) {
	if a.Pod == nil {
		return nil, "no driver Pod to check", nil
	}
	carrier, err := carrierObject(ctx, cs, a)
	if err != nil || carrier == nil {
		if err == nil {
			err = fmt.Errorf("%s is an operator's resource: check its manifests with sparkui-fn validate", a.Carrier)
		}
		return nil, "not run: " + err.Error(), nil
	}
	objs := []runtime.Object{carrier}
	svc := a.Service.DeepCopy()
	svc.Spec.Selector = nil
	delete(svc.Labels, sidecar.LabelBoundPod)
	objs = append(objs, svc)
	for _, v := range a.Pod.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		if cm, err := cs.CoreV1().ConfigMaps(a.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{}); err == nil {
			objs = append(objs, typed(cm, "v1", "ConfigMap"))
		}
	}
	svcs, err := cs.CoreV1().Services(a.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("listing Services: %w", err)
	}
	for i := range svcs.Items {
		s := &svcs.Items[i]
		if s.Name != a.Service.Name && s.Labels[names.LabelManagedBy] != names.ManagedByValue && len(s.Spec.Selector) > 0 &&
			labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(a.Pod.Labels)) {
			objs = append(objs, typed(s, "v1", "Service"))
		}
	}
	roles, err := cs.RbacV1().Roles(a.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("listing Roles: %w", err)
	}
	for i := range roles.Items {
		objs = append(objs, typed(&roles.Items[i], "rbac.authorization.k8s.io/v1", "Role"))
	}
	rbs, err := cs.RbacV1().RoleBindings(a.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("listing RoleBindings: %w", err)
	}
	seen := map[string]bool{}
	for i := range rbs.Items {
		rb := &rbs.Items[i]
		objs = append(objs, typed(rb, "rbac.authorization.k8s.io/v1", "RoleBinding"))
		if rb.RoleRef.Kind == "ClusterRole" && !seen[rb.RoleRef.Name] {
			seen[rb.RoleRef.Name] = true
			if cr, err := cs.RbacV1().ClusterRoles().Get(ctx, rb.RoleRef.Name, metav1.GetOptions{}); err == nil {
				objs = append(objs, typed(cr, "rbac.authorization.k8s.io/v1", "ClusterRole"))
			}
		}
	}
	var items []*kyaml.RNode
	for _, o := range objs {
		rn, err := toRNode(o)
		if err != nil {
			return nil, "", err
		}
		items = append(items, rn)
	}
	for _, rn := range items {
		if rn.GetKind() == "Service" && rn.GetName() == a.Service.Name {
			for _, f := range app.RuntimeOwnedFields(rn.YNode()) {
				yamlx.Delete(f.Parent, f.Key)
			}
		}
	}
	m := app.BuildWith(items, app.CarrierOptions{})
	for _, r := range validate.Run(&validate.Context{Model: m}) {
		if liveRules[r.Tags["rule"]] && (r.Severity == framework.Error || r.Severity == framework.Warning) {
			results = append(results, r)
		}
	}
	sort.SliceStable(results, func(i, j int) bool {
		return results[i].Severity == framework.Error && results[j].Severity != framework.Error
	})
	return results, "", nil
}

// carrierGetters GET each carrier kind the function reads from a live cluster (the kinds an
// owner chain of a driver Pod ends in; uistate names the carrier "Kind/name"). The model's
// decisions about these kinds stay in internal/app's adapters: this is only where to read them.
var carrierGetters = map[string]func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error){
	"Deployment": func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
		o, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		return typedOrErr(o, err, "apps/v1", "Deployment")
	},
	"StatefulSet": func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
		o, err := cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		return typedOrErr(o, err, "apps/v1", "StatefulSet")
	},
	"Job": func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
		o, err := cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		return typedOrErr(o, err, "batch/v1", "Job")
	},
	"CronJob": func(ctx context.Context, cs kubernetes.Interface, ns, name string) (runtime.Object, error) {
		o, err := cs.BatchV1().CronJobs(ns).Get(ctx, name, metav1.GetOptions{})
		return typedOrErr(o, err, "batch/v1", "CronJob")
	},
}

// carrierObject is the carrier as the function reads it: a spark-submit Pod itself (the Pod
// is its own carrier when it carries Spark's application label), or the workload at the top
// of its controller chain; nil for an operator's resource, which the plugin does not read.
func carrierObject(ctx context.Context, cs kubernetes.Interface, a *uistate.App) (runtime.Object, error) {
	kind, name, _ := strings.Cut(a.Carrier, "/")
	if get := carrierGetters[kind]; get != nil {
		return get(ctx, cs, a.Namespace, name)
	}
	if a.Pod != nil && a.Carrier == "Pod/"+a.Pod.Name && a.IdentityKey == names.LabelAppSelector {
		return typed(a.Pod.DeepCopy(), "v1", "Pod"), nil
	}
	return nil, nil
}

func typedOrErr[T interface {
	runtime.Object
	metav1.Object
}](o T, err error, apiVersion, kind string) (runtime.Object, error) {
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", kind, err)
	}
	return typed(o, apiVersion, kind), nil
}

// typed sets the TypeMeta typed clients leave empty and drops what the server adds (status,
// managed fields, versions), which no rule reads.
func typed[T interface {
	runtime.Object
	metav1.Object
}](o T, apiVersion, kind string) runtime.Object {
	o.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
	o.SetManagedFields(nil)
	o.SetResourceVersion("")
	o.SetGeneration(0)
	return o
}

func toRNode(o runtime.Object) (*kyaml.RNode, error) {
	b, err := sigsyaml.Marshal(o)
	if err != nil {
		return nil, err
	}
	rn, err := kyaml.Parse(string(b))
	if err != nil {
		return nil, err
	}
	_ = rn.PipeE(kyaml.Clear("status"))
	return rn, nil
}

// podTerminated is the sparkui-runtime container's last termination message (the current
// state's, else the last state's), and how it ended.
func podTerminated(p *corev1.Pod) (msg, how string, found bool) {
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if cs.Name != sidecar.ContainerName {
			continue
		}
		found = true
		for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
			if t != nil {
				return strings.TrimSpace(t.Message), fmt.Sprintf("terminated %s, exit code %d, restarts %d", t.Reason, t.ExitCode, cs.RestartCount), true
			}
		}
		state := "waiting"
		switch {
		case cs.State.Running != nil:
			state = "running"
		case cs.State.Waiting != nil:
			state = "waiting: " + cs.State.Waiting.Reason
		}
		return "", fmt.Sprintf("%s, restarts %d", state, cs.RestartCount), true
	}
	return "", "", false
}
