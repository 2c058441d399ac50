// The JSON Patches: every one starts with the guards that prove the Service is this
// application's, and the API server applies the whole patch or none of it.

package binder

import (
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
)

type op struct {
	Op    string `json:"op"`
	From  string `json:"from,omitempty"` // move only
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// escape makes a JSON Pointer token of s (RFC 6901).
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// guards prove the Service is sparkui's UI Service of this application: its application
// label, sparkui's managed-by label (both written by the function, replaced by an operator
// that takes over a Service of the same name, e.g. kubeflow's createDriverIngressService
// Update, which sets the labels whole) and its UI port's name.
func (t Target) guards() []op {
	k, v := t.Guard()
	return []op{
		{Op: "test", Path: "/metadata/labels/" + escape(k), Value: v},
		{Op: "test", Path: managedByPath, Value: names.ManagedByValue},
		{Op: "test", Path: "/spec/ports/0/name", Value: t.PortName},
	}
}

var managedByPath = "/metadata/labels/" + escape(names.LabelManagedBy)

var boundPodPath = "/metadata/labels/" + escape(sidecar.LabelBoundPod)

// BindPatch points the UI port at port, selects the driver Pod, and makes the Pod the
// Service's owner (no blockOwnerDeletion: the runtime may not update Pods' finalizers, and
// the Service needs no ordering) so the Service is collected with the Pod. With NoOwner it
// labels the Service sparkui.dev/bound-pod=<Pod UID> instead: the Service outlives the Pod
// (the next run binds it), and the label is what proves this Pod holds the binding.
func (t Target) BindPatch(port int) []byte { return t.BindPatchWith(port, State{}, true) }

// BindPatchWith is BindPatch writing the status annotations st in the same patch;
// haveAnnotations says whether metadata.annotations exists (State.ops, newAnnotations).
func (t Target) BindPatchWith(port int, st State, haveAnnotations bool) []byte {
	ops := append(t.guards(),
		op{Op: "replace", Path: "/spec/ports/0/targetPort", Value: port},
		// add replaces an existing member (RFC 6902 4.1): the selector may or may not exist.
		op{Op: "add", Path: "/spec/selector", Value: t.Selector},
	)
	if t.NoOwner {
		if t.PodUID != "" {
			// metadata.labels exists: the guard just tested a label in it.
			ops = append(ops, op{Op: "add", Path: boundPodPath, Value: t.PodUID})
		}
	} else if t.PodUID != "" && t.PodName != "" {
		ops = append(ops, op{Op: "add", Path: "/metadata/ownerReferences", Value: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Pod", Name: t.PodName, UID: types.UID(t.PodUID),
		}}})
	}
	return mustJSON(append(ops, statusOps(st, haveAnnotations)...))
}

// statusOps writes st in whichever form haveAnnotations calls for (nothing for a zero st).
func statusOps(st State, haveAnnotations bool) []op {
	switch {
	case st.State == "":
		return nil
	case haveAnnotations:
		return st.ops()
	}
	return st.newAnnotations(nil)
}

// holderGuard proves this Pod holds the binding: only its own bind wrote its UID as the
// Service's (single) ownerReference, and a later Pod's bind of the same application (a
// replacement Pod, the next run of a schedule) replaces it with that Pod's. The selector cannot
// tell them apart (both Pods carry the same spark-app-selector), and an annotation would need
// metadata.annotations to exist; ownerReferences is written whole by every bind and declared by
// no manifest (docs/gitops.md), so a re-apply keeps it. Without a Pod UID there is no guard.
//
// With NoOwner there is no ownerReference: the guard is the label sparkui.dev/bound-pod, which
// every bind sets to its Pod's UID. Testing the selector instead would not do: a replacement
// Pod of a Deployment or StatefulSet carries the same labels (pod-template-hash,
// statefulset.kubernetes.io/pod-name) as the Pod it replaces, so its bind writes the same
// selector, and an Apache SparkApplication recreated under the same name starts again at
// spark-app-selector=<name>-0 (SparkAppSubmissionWorker.generateSparkAppId).
func (t Target) holderGuard() []op {
	if t.NoOwner {
		if t.PodUID == "" {
			return nil
		}
		return []op{{Op: "test", Path: boundPodPath, Value: t.PodUID}}
	}
	if t.PodUID == "" || t.PodName == "" {
		return nil
	}
	return []op{{Op: "test", Path: "/metadata/ownerReferences/0/uid", Value: t.PodUID}}
}

// URIOps is what a withdrawal does to the resolved-external-uri annotation. JSON Patch
// `remove` fails on a missing member, and the whole patch with it: which form is sent depends
// on what the client last saw of the Service.
type URIOps int

const (
	// KeepURI: no annotation operation (the Service is known to have no annotation and no
	// controller expected to write one).
	KeepURI URIOps = iota
	// RemoveURI: the annotation is known to be there: remove it.
	RemoveURI
	// ClearURI: it may or may not be there (an outside controller may have written it since
	// the last response, or the state is unknown): `add` it (which creates or replaces) and
	// then `remove` it, which succeeds either way as long as metadata.annotations exists.
	ClearURI
)

var uriPath = "/metadata/annotations/" + escape(names.AnnotationResolvedExternalURI)

// ops are the operations that take the resolved external URI away as u says.
func (u URIOps) ops() []op {
	switch u {
	case RemoveURI:
		return []op{{Op: "remove", Path: uriPath}}
	case ClearURI:
		return []op{{Op: "add", Path: uriPath, Value: ""}, {Op: "remove", Path: uriPath}}
	}
	return nil
}

// WithdrawPatch sets the selector that matches nothing, with the same guards and only while
// this Pod holds the binding (holderGuard), and removes the resolved external URI as uri says.
func (t Target) WithdrawPatch(uri URIOps) []byte { return t.WithdrawPatchWith(uri, State{}, true) }

// WithdrawPatchWith is WithdrawPatch writing the status annotations st in the same patch.
// Without metadata.annotations (haveAnnotations false) the map is created with st's values;
// the resolved external URI cannot be there then, and uri is ignored.
func (t Target) WithdrawPatchWith(uri URIOps, st State, haveAnnotations bool) []byte {
	ops := append(t.guards(), t.holderGuard()...)
	ops = append(ops, op{Op: "add", Path: "/spec/selector", Value: t.WithdrawnSelector()})
	if st.State != "" && !haveAnnotations {
		return mustJSON(append(ops, st.newAnnotations(nil)...))
	}
	ops = append(ops, uri.ops()...)
	return mustJSON(append(ops, st.ops()...))
}

// Handoff is where a withdrawal hands the Service off to: the shared History Server
// redirector's Pods (names.RedirectorSelector) on Port, with URI (the application's page on
// the History Server) in the sparkui.dev/history-uri annotation. The zero value is "no
// hand-off": the plain withdrawal.
type Handoff struct {
	URI  string
	Port int
}

var historyURIPath = "/metadata/annotations/" + escape(names.AnnotationHistoryURI)

// HandoffPatch is the withdrawal that hands the Service off (docs/history.md): with the same
// guards as WithdrawPatch, and only while this Pod holds the binding, it selects the
// redirector's Pods, points the UI port at the redirector's port, writes the History Server
// URI and removes the resolved external URI as uri says. haveAnnotations says whether
// metadata.annotations exists: without it the whole map is added, guarded by a `test` that it
// is still missing (JSON Patch `test` with value null succeeds on a missing member only), so
// annotations written meanwhile are never replaced; the resolved external URI cannot be there
// then, and uri is ignored.
func (t Target) HandoffPatch(h Handoff, uri URIOps, haveAnnotations bool) []byte {
	return t.HandoffPatchWith(h, uri, haveAnnotations, State{})
}

// HandoffPatchWith is HandoffPatch writing the status annotations st in the same patch.
func (t Target) HandoffPatchWith(h Handoff, uri URIOps, haveAnnotations bool, st State) []byte {
	ops := append(t.guards(), t.holderGuard()...)
	ops = append(ops,
		op{Op: "add", Path: "/spec/selector", Value: names.RedirectorSelector()},
		op{Op: "replace", Path: "/spec/ports/0/targetPort", Value: h.Port},
	)
	if !haveAnnotations {
		return mustJSON(append(ops, st.newAnnotations(map[string]string{names.AnnotationHistoryURI: h.URI})...))
	}
	ops = append(ops, op{Op: "add", Path: historyURIPath, Value: h.URI})
	ops = append(ops, uri.ops()...)
	return mustJSON(append(ops, st.ops()...))
}

// PublishPatch writes the resolved external URI, guarded like the others and by the bound
// selector (a Service withdrawn meanwhile, or bound by someone else, is left alone).
// haveAnnotations says whether metadata.annotations exists: `add` into a missing map fails.
func (t Target) PublishPatch(uri string, haveAnnotations bool) []byte {
	ops := append(t.guards(), t.holderGuard()...)
	ops = append(ops, op{Op: "test", Path: "/spec/selector", Value: t.Selector})
	if haveAnnotations {
		ops = append(ops, op{Op: "add", Path: uriPath, Value: uri})
	} else {
		ops = append(ops, op{Op: "add", Path: "/metadata/annotations", Value: map[string]string{names.AnnotationResolvedExternalURI: uri}})
	}
	return mustJSON(ops)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
