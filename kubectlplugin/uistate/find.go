package uistate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkui/sparkui/internal/app"
	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
)

// App is one application sparkui serves, as the cluster shows it.
type App struct {
	Namespace string
	// Name is how users name it: the carrier's name for a carrier, the spark-submit prefix
	// (the UI Service's name without -ui-svc) for a spark-submit Pod.
	Name    string
	Service *corev1.Service
	// IdentityKey/IdentityValue are the identity label the function put on the Service
	// (spark-app-selector for a spark-submit Pod, sparkui.dev/application otherwise).
	IdentityKey, IdentityValue string

	State State
	Port  string // the UI port's targetPort while bound or handed off
	// Claims are the runtime's status annotations; Disagree says where they contradict the
	// spec, ClaimProblem where one cannot be read.
	Claims       Claims
	Disagree     string
	ClaimProblem string

	// Pod is the driver Pod the state refers to (nil when none is found: not started yet,
	// or gone); PodNote says how it was found or why it is missing.
	Pod     *corev1.Pod
	PodNote string
	// Carrier is Kind/name of what runs the driver (the Pod's controller chain).
	Carrier string

	Links Links
}

// Links are the ways to the UI that the cluster records.
type Links struct {
	Route    string `json:"route,omitempty"`    // from the route annotations (and an Ingress's TLS, for the scheme)
	External string `json:"external,omitempty"` // sparkui.dev/resolved-external-uri
	History  string `json:"history,omitempty"`  // sparkui.dev/history-uri (the application's claim; meaningful while handed off)
}

// Link is the one link `list` shows: the History page once handed off, else the route URL,
// else the external URI.
func (a *App) Link() string {
	switch {
	case a.State == HandedOff && a.Links.History != "":
		return a.Links.History
	case a.Links.Route != "":
		return a.Links.Route
	}
	return a.Links.External
}

// Age is how long the UI Service has existed.
func (a *App) Age(now time.Time) time.Duration {
	return now.Sub(a.Service.CreationTimestamp.Time)
}

// Find lists every UI Service sparkui manages in ns ("" = every namespace) and builds its App,
// sorted by namespace and name.
func Find(ctx context.Context, cs kubernetes.Interface, ns string) ([]*App, error) {
	sel := labels.Set{names.LabelManagedBy: names.ManagedByValue}.String()
	l, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing sparkui's UI Services: %w", err)
	}
	var out []*App
	for i := range l.Items {
		a, err := build(ctx, cs, &l.Items[i])
		if err != nil {
			return nil, err
		}
		if a != nil {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// Get finds the application called name in ns: by carrier or prefix name, or by its UI
// Service's name.
func Get(ctx context.Context, cs kubernetes.Interface, ns, name string) (*App, error) {
	all, err := Find(ctx, cs, ns)
	if err != nil {
		return nil, err
	}
	var known []string
	for _, a := range all {
		if a.Name == name || a.Service.Name == name {
			return a, nil
		}
		known = append(known, a.Name)
	}
	if len(known) == 0 {
		return nil, fmt.Errorf("no application %q in namespace %q: sparkui serves none there (no Service labelled %s=%s)", name, ns, names.LabelManagedBy, names.ManagedByValue)
	}
	return nil, fmt.Errorf("no application %q in namespace %q; there are: %s", name, ns, strings.Join(known, ", "))
}

// build reads one Service; nil when it is not a UI Service (no identity label or no port).
func build(ctx context.Context, cs kubernetes.Interface, svc *corev1.Service) (*App, error) {
	a := &App{Namespace: svc.Namespace, Service: svc}
	switch {
	case svc.Labels[app.LabelApplication] != "":
		a.IdentityKey, a.IdentityValue = app.LabelApplication, svc.Labels[app.LabelApplication]
		a.Name = a.IdentityValue
	case svc.Labels[names.LabelAppSelector] != "":
		a.IdentityKey, a.IdentityValue = names.LabelAppSelector, svc.Labels[names.LabelAppSelector]
		a.Name = strings.TrimSuffix(svc.Name, names.UISvcSuffix)
	default:
		return nil, nil
	}
	if len(svc.Spec.Ports) == 0 {
		return nil, nil
	}
	a.State, a.Port = SpecState(svc)
	a.Claims, a.ClaimProblem = ReadClaims(svc)
	a.Disagree = Disagreement(a.State, a.Port, a.Claims)
	if err := a.findPod(ctx, cs); err != nil {
		return nil, err
	}
	a.Carrier = carrier(ctx, cs, a)
	a.Links = links(ctx, cs, svc)
	return a, nil
}

// findPod joins the driver Pod the Service's state refers to. Only the spec and the
// runtime's bind (ownerReference or the bound-pod label, both written with the guard) say
// which Pod; the ui-pod claim is used only when they say nothing.
func (a *App) findPod(ctx context.Context, cs kubernetes.Interface) error {
	svc := a.Service
	sel := labels.Set{a.IdentityKey: a.IdentityValue}.String()
	l, err := cs.CoreV1().Pods(a.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil && !apierrors.IsForbidden(err) {
		return fmt.Errorf("listing the driver Pods of %s/%s: %w", a.Namespace, svc.Name, err)
	}
	if err != nil {
		a.PodNote = "cannot list Pods: " + err.Error()
		return nil
	}
	pods := l.Items
	byUID := func(uid, how string) bool {
		for i := range pods {
			if string(pods[i].UID) == uid {
				a.Pod, a.PodNote = &pods[i], how
				return true
			}
		}
		a.PodNote = how + ": Pod " + uid + " is gone"
		return false
	}
	switch {
	case NextWaiting(a.State, a.Claims):
		// The waiting runtime's Pod explains the state, not the earlier Pod that withdrew
		// (or bound: the bound-pod label stays until the next bind): found below.
	case a.State == Withdrawn:
		byUID(svc.Spec.Selector[names.WithdrawnSelectorKey], "withdrawn by")
		return nil
	case len(svc.OwnerReferences) == 1 && svc.OwnerReferences[0].Kind == "Pod":
		byUID(string(svc.OwnerReferences[0].UID), "bound by (ownerReference)")
		return nil
	case svc.Labels[sidecar.LabelBoundPod] != "":
		byUID(svc.Labels[sidecar.LabelBoundPod], "bound by ("+sidecar.LabelBoundPod+")")
		return nil
	}
	if a.State == Bound {
		s := labels.SelectorFromSet(svc.Spec.Selector)
		var match []corev1.Pod
		for _, p := range pods {
			if s.Matches(labels.Set(p.Labels)) {
				match = append(match, p)
			}
		}
		pods = match
	}
	if len(pods) == 0 {
		a.PodNote = "no driver Pod labelled " + sel
		return nil
	}
	// The newest run: a schedule's or a rollout's earlier Pods may linger.
	sort.Slice(pods, func(i, j int) bool {
		return pods[j].CreationTimestamp.Before(&pods[i].CreationTimestamp)
	})
	a.Pod, a.PodNote = &pods[0], "newest Pod labelled "+sel
	if a.Claims.Pod != "" {
		for i := range pods {
			if pods[i].Name == a.Claims.Pod {
				a.Pod, a.PodNote = &pods[i], "named by "+AnnotationUIPod
			}
		}
	}
	return nil
}
