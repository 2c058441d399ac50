// Package binder writes the UI Service: one guarded JSON Patch to bind it to the UI's port
// and the driver Pod, one to withdraw it. There is no read before a write and no
// resourceVersion: the patch's `test` operations are the guard, and the API server applies
// the whole patch or none of it.
package binder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/runtime/externaluri"
)

// The kubeflow operator's labels on the Services it creates (its pkg/common/spark.go).
const (
	kubeflowGroup        = "sparkoperator.k8s.io"
	kubeflowAppLabel     = kubeflowGroup + "/app-name"
	kubeflowCreatedLabel = kubeflowGroup + "/created-by-spark-operator"
)

// FieldManager is the name the runtime's writes are recorded under in managedFields.
const FieldManager = "sparkui-runtime"

// Target is the UI Service and what proves it belongs to this application.
type Target struct {
	Namespace string
	Service   string
	AppID     string // the Service's spark-app-selector label must have this value (unless GuardKey)
	PortName  string // its first port's name: spark-ui, or https with TLS
	PodName   string
	PodUID    string
	// GuardKey and GuardValue, when GuardKey is set, are the Service label every patch tests
	// instead of spark-app-selector=AppID (sidecar.Config.GuardLabel): a Service shared by
	// successive runs whose id is not known when it is built.
	GuardKey, GuardValue string
	// NoOwner: the bind writes the label sidecar.LabelBoundPod=PodUID instead of making the
	// Pod the Service's owner, and that label is the holder guard (sidecar.Config.NoOwnerReference).
	NoOwner bool
	// Selector selects the driver Pod when bound.
	Selector map[string]string
	// Role is the Role that should grant get and patch, named in RBAC failure messages.
	Role string
}

// DefaultSelector selects the driver Pod of application appID.
func DefaultSelector(appID string) map[string]string {
	return map[string]string{names.LabelAppSelector: appID, names.LabelSparkRole: names.RoleDriver}
}

// WithdrawnSelector matches no Pod: the endpoint controllers empty the Service's slices
// (removing the selector would leave the last endpoints in place).
func (t Target) WithdrawnSelector() map[string]string {
	return map[string]string{names.WithdrawnSelectorKey: t.PodUID}
}

type op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// escape makes a JSON Pointer token of s (RFC 6901).
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// Guard is the label that proves the Service is this application's: GuardKey=GuardValue when
// set, else spark-app-selector=AppID.
func (t Target) Guard() (key, value string) {
	if t.GuardKey != "" {
		return t.GuardKey, t.GuardValue
	}
	return names.LabelAppSelector, t.AppID
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
func (t Target) BindPatch(port int) []byte {
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
	return mustJSON(ops)
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
func (t Target) WithdrawPatch(uri URIOps) []byte {
	ops := append(t.guards(), t.holderGuard()...)
	ops = append(ops, op{Op: "add", Path: "/spec/selector", Value: t.WithdrawnSelector()})
	return mustJSON(append(ops, uri.ops()...))
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
	ops := append(t.guards(), t.holderGuard()...)
	ops = append(ops,
		op{Op: "add", Path: "/spec/selector", Value: names.RedirectorSelector()},
		op{Op: "replace", Path: "/spec/ports/0/targetPort", Value: h.Port},
	)
	if !haveAnnotations {
		ops = append(ops,
			op{Op: "test", Path: "/metadata/annotations", Value: nil},
			op{Op: "add", Path: "/metadata/annotations", Value: map[string]string{names.AnnotationHistoryURI: h.URI}})
		return mustJSON(ops)
	}
	ops = append(ops, op{Op: "add", Path: historyURIPath, Value: h.URI})
	return mustJSON(append(ops, uri.ops()...))
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

// Client writes one Service.
type Client struct {
	rc rest.Interface
	t  Target

	mu   sync.Mutex
	view *externaluri.Service // the Service as the last response had it; nil = unknown
}

// NewClient makes a client for core/v1 Services from cfg. It registers no API types: the
// runtime sends JSON Patches and reads Status errors, nothing else (which keeps it small).
func NewClient(cfg *rest.Config, t Target) (*Client, error) {
	c := externaluri.CoreV1Config(cfg)
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return &Client{rc: rc, t: t}, nil
}

// patch sends body and remembers the Service the API server answered with. A failure other
// than a refused patch (which changed nothing) leaves the Service's state unknown.
func (c *Client) patch(ctx context.Context, body []byte) error {
	res := c.rc.Patch(types.JSONPatchType).
		Namespace(c.t.Namespace).Resource("services").Name(c.t.Service).
		Param("fieldManager", FieldManager).
		Body(body).Do(ctx)
	raw, err := res.Raw()
	if err != nil {
		err = res.Error() // the API server's Status, when the body is one
	}
	c.remember(raw, err)
	return err
}

func (c *Client) remember(raw []byte, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if !isGuardFailure(err) {
			c.view = nil
		}
		return
	}
	if v, perr := externaluri.Parse(raw); perr == nil {
		c.view = v
	} else {
		c.view = nil
	}
}

// View is the Service as the last response had it, nil when unknown (nothing written yet in
// this process, or the last request failed and may or may not have been applied).
func (c *Client) View() *externaluri.Service {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view
}

// Get reads the Service (used only to poll a load balancer's ingress, and by wait-uri).
func (c *Client) Get(ctx context.Context) (*externaluri.Service, error) {
	res := c.rc.Get().Namespace(c.t.Namespace).Resource("services").Name(c.t.Service).Do(ctx)
	raw, err := res.Raw()
	if err != nil {
		return nil, res.Error()
	}
	v, err := externaluri.Parse(raw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.view = v
	c.mu.Unlock()
	return v, nil
}

// Bind sends BindPatch.
func (c *Client) Bind(ctx context.Context, port int) error {
	return c.classify(ctx, "bind", c.patch(ctx, c.t.BindPatch(port)))
}

// WithdrawURIOps decides, from the last response, what the withdrawal does to the resolved
// external URI: remove it when it was there, clear it (add + remove) when an outside
// controller may have written it since (provide-external-uri: "true") or the state is
// unknown, nothing when the Service had no annotation and none is expected.
func WithdrawURIOps(view *externaluri.Service) URIOps {
	switch {
	case view == nil:
		return ClearURI
	case view.URI() != "":
		return RemoveURI
	case view.Metadata.Annotations[names.AnnotationProvideExternalURI] == "true":
		return ClearURI
	}
	return KeepURI
}

// Withdrawal is what a withdrawal found.
type Withdrawal int

const (
	// Withdrawn: the API server applied the withdrawn selector.
	Withdrawn Withdrawal = iota
	// Gone: the Service does not exist (Spark deletes its Services at stop).
	Gone
	// NotHeld: a guard refused it: the Service is bound by another Pod since (a later Pod's
	// bind replaced this one's ownerReference), was never bound by this Pod, or is not this
	// application's. Nothing was changed and nothing of this Pod's is routed.
	NotHeld
)

func (w Withdrawal) String() string {
	return [...]string{"withdrawn", "gone", "not-held"}[w]
}

// Withdraw sends WithdrawPatch, removing the resolved external URI in the same patch. A
// Service that is gone, or that this Pod does not hold (another application's, or bound by a
// later Pod of this one), counts as withdrawn: there is nothing of this Pod's left to route.
// No read follows a refusal: whose the Service is does not change what to do.
//
// One request in the normal case. When the patch with an annotation operation is refused (the
// annotation, or metadata.annotations, is not there after all: removed by its controller, or
// the state was unknown after a restart; or a guard failed), the plain withdrawal follows at
// once: two requests, no read.
//
// With a hand-off (h.URI set) the withdrawal is HandoffPatch instead: one request in the
// normal case; when it is refused, the other annotations form follows at once (the
// annotations are not as the last response had them: an unknown state after a restart, or
// written or removed meanwhile); refused again, a guard failed.
func (c *Client) Withdraw(ctx context.Context, h Handoff) (Withdrawal, error) {
	var err error
	if h.URI != "" {
		err = c.handoff(ctx, h)
	} else {
		ops := WithdrawURIOps(c.View())
		err = c.patch(ctx, c.t.WithdrawPatch(ops))
		if ops != KeepURI && isGuardFailure(err) {
			err = c.patch(ctx, c.t.WithdrawPatch(KeepURI))
		}
	}
	switch {
	case err == nil:
		return Withdrawn, nil
	case isGuardFailure(err):
		return NotHeld, nil
	}
	err = c.classify(ctx, "withdraw", err)
	var f *Failure
	if errors.As(err, &f) && f.Kind == NotFound {
		return Gone, nil
	}
	return 0, err
}

// handoff sends HandoffPatch in the form the last response calls for (metadata.annotations
// unknown counts as there: the function writes annotations on the UI Services it builds),
// then the other form when that is refused.
func (c *Client) handoff(ctx context.Context, h Handoff) error {
	v := c.View()
	have := v == nil || len(v.Metadata.Annotations) > 0
	err := c.patch(ctx, c.t.HandoffPatch(h, WithdrawURIOps(v), have))
	if isGuardFailure(err) {
		// Unknown now: clear the resolved URI whether or not it is there.
		err = c.patch(ctx, c.t.HandoffPatch(h, ClearURI, !have))
	}
	return err
}

// Publish writes the resolved external URI (PublishPatch). When the patch is refused with the
// form the last response called for, the other form is tried (metadata.annotations appeared or
// went meanwhile); refused again, the Service is no longer bound to this driver (or no longer
// this application's): a NotOurs failure, without the read that names the owner.
func (c *Client) Publish(ctx context.Context, uri string) error {
	v := c.View()
	have := v != nil && len(v.Metadata.Annotations) > 0
	err := c.patch(ctx, c.t.PublishPatch(uri, have))
	if isGuardFailure(err) {
		err = c.patch(ctx, c.t.PublishPatch(uri, !have))
	}
	if isGuardFailure(err) {
		return &Failure{Kind: NotOurs, Err: err, Message: fmt.Sprintf(
			"publish the external URI on Service %s/%s: refused, the Service is no longer bound to this driver "+
				"(its selector changed) or is not this application's; the URI is not written", c.t.Namespace, c.t.Service)}
	}
	return c.classify(ctx, "publish the external URI on", err)
}

// isGuardFailure reports a JSON Patch the API server could not apply (a failed `test`, or a
// `remove`/`add` on a missing path): nothing was changed.
func isGuardFailure(err error) bool {
	var status apierrors.APIStatus
	return err != nil && errors.As(err, &status) && status.Status().Code == http.StatusUnprocessableEntity && isTestFailure(status.Status())
}

// Kind is a class of failure.
type Kind int

const (
	Transient    Kind = iota // unreachable, timeout, 5xx, 429: retry with backoff
	Unauthorized             // 401: credentials no longer valid
	Forbidden                // 403: RBAC
	NotFound                 // 404: no such Service (yet)
	NotOurs                  // 422 from a test operation: the Service is not this application's
	Invalid                  // other 4xx: the request itself is wrong
)

var kindNames = [...]string{"transient", "unauthorized", "forbidden", "not-found", "not-ours", "invalid"}

func (k Kind) String() string { return kindNames[k] }

// Failure is a classified API error with a message saying what to do.
type Failure struct {
	Kind    Kind
	Message string
	Err     error
}

func (f *Failure) Error() string { return f.Message }
func (f *Failure) Unwrap() error { return f.Err }

// Fatal reports failures that need a person to act (they go to the termination log).
func (f *Failure) Fatal() bool { return f.Kind != Transient }

var userRE = regexp.MustCompile(`User "([^"]+)"`)

// classify turns err into a *Failure with a message naming the verb, resource, namespace,
// ServiceAccount and Role involved.
func (c *Client) classify(ctx context.Context, action string, err error) error {
	if err == nil {
		return nil
	}
	t := c.t
	svc := fmt.Sprintf("Service %s/%s", t.Namespace, t.Service)
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return &Failure{Kind: Transient, Err: err, Message: fmt.Sprintf("%s %s: API server unreachable: %v", action, svc, err)}
	}
	code := status.Status().Code
	switch {
	case code == http.StatusUnauthorized:
		return &Failure{Kind: Unauthorized, Err: err, Message: fmt.Sprintf(
			"%s %s: 401 Unauthorized: the API server no longer accepts the runtime's credentials "+
				"(ServiceAccount token expired or revoked, or the ServiceAccount was deleted and recreated); "+
				"the in-cluster token is re-read from its file, restart the Pod if it persists", action, svc)}
	case code == http.StatusForbidden:
		who := "the Pod's ServiceAccount"
		if m := userRE.FindStringSubmatch(status.Status().Message); m != nil {
			who = m[1]
			if sa, ok := strings.CutPrefix(who, "system:serviceaccount:"); ok {
				if ns, name, ok := strings.Cut(sa, ":"); ok {
					who = fmt.Sprintf("ServiceAccount %s/%s (%s)", ns, name, m[1])
				}
			}
		}
		return &Failure{Kind: Forbidden, Err: err, Message: fmt.Sprintf(
			"%s %s: 403 Forbidden: %s may not patch services %q in namespace %s; "+
				"Role %s/%s must grant verbs [get patch] on resource services (apiGroups [\"\"]) with resourceNames [%s] "+
				"and a RoleBinding must bind it to that ServiceAccount (sparkui-fn with rbac.create emits both); API server said: %s",
			action, svc, who, t.Service, t.Namespace, t.Namespace, t.Role, t.Service, status.Status().Message)}
	case code == http.StatusNotFound:
		return &Failure{Kind: NotFound, Err: err, Message: fmt.Sprintf(
			"%s %s: 404 Not Found: the UI Service does not exist (yet?); it is created from the same manifests as the driver Pod", action, svc)}
	case code == http.StatusUnprocessableEntity && isTestFailure(status.Status()):
		return &Failure{Kind: NotOurs, Err: err, Message: c.describeOwner(ctx, action)}
	case code == http.StatusTooManyRequests || code >= 500 || code == http.StatusConflict:
		return &Failure{Kind: Transient, Err: err, Message: fmt.Sprintf("%s %s: %d: %s", action, svc, code, status.Status().Message)}
	}
	return &Failure{Kind: Invalid, Err: err, Message: fmt.Sprintf("%s %s: %d: %s", action, svc, code, status.Status().Message)}
}

// kubeflowOwner tells a Service the kubeflow operator has written, and for which
// SparkApplication ("" when its labels and owner do not say).
func kubeflowOwner(labels map[string]string, owners []metav1.OwnerReference) (string, bool) {
	for _, o := range owners {
		if o.Kind == "SparkApplication" && strings.HasPrefix(o.APIVersion, kubeflowGroup+"/") {
			return o.Name, true
		}
	}
	if app := labels[kubeflowAppLabel]; app != "" {
		return app, true
	}
	return "", labels[kubeflowCreatedLabel] == "true"
}

// isTestFailure tells a JSON Patch that could not be applied (a refused `test`, the guard; or
// an `add`/`remove` on a missing path) from a validation error: the API server (1.37) answers
// the former with a bare 422 ("the server rejected our request due to an error in our
// request", no details), and a patched object that fails validation with a 422 naming the
// fields at fault.
func isTestFailure(s metav1.Status) bool {
	return s.Details == nil || len(s.Details.Causes) == 0
}

// describeOwner reads the Service (the one GET the runtime makes, only after a refusal) to
// say whose it is.
func (c *Client) describeOwner(ctx context.Context, action string) string {
	t := c.t
	gk, gv := t.Guard()
	base := fmt.Sprintf("%s Service %s/%s: refused, the Service is not this application's UI Service "+
		"(want labels %s=%s and %s=%s and first port named %q)", action, t.Namespace, t.Service, gk, gv, names.LabelManagedBy, names.ManagedByValue, t.PortName)
	raw, err := c.rc.Get().Namespace(t.Namespace).Resource("services").Name(t.Service).Do(ctx).Raw()
	if err != nil {
		return base + fmt.Sprintf("; reading it to say whose it is failed: %v", err)
	}
	var svc struct {
		Metadata struct {
			Labels          map[string]string       `json:"labels"`
			OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
		} `json:"metadata"`
		Spec struct {
			Ports []struct {
				Name string `json:"name"`
			} `json:"ports"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &svc); err != nil {
		return base + "; its JSON could not be read: " + err.Error()
	}
	var found []string
	// The kubeflow operator makes the SparkApplication the owner of the Services it writes
	// (pkg/util/sparkapplication.go GetOwnerReference) and labels them with its name
	// (GetResourceLabels: sparkoperator.k8s.io/app-name, unless sparkUIOptions.serviceLabels
	// replaces them) and, since commit 1ecb7ec6 (#3032, after v2.5.2),
	// sparkoperator.k8s.io/created-by-spark-operator; its UI Service of app <app> is
	// <app>-ui-svc (internal/names/operators.go).
	if kf, ok := kubeflowOwner(svc.Metadata.Labels, svc.Metadata.OwnerReferences); ok {
		found = append(found, fmt.Sprintf("the kubeflow spark-operator has taken it over as its own UI Service of SparkApplication %q "+
			"(it names that Service %s); render the manifests with a current sparkui-fn, whose UI Service names keep clear of the operator's", kf, names.KubeflowUIServicePattern))
	}
	if v, ok := svc.Metadata.Labels[gk]; ok {
		found = append(found, fmt.Sprintf("it belongs to application %q (label %s=%s)", v, gk, v))
	} else {
		found = append(found, "it has no "+gk+" label")
	}
	if m := svc.Metadata.Labels[names.LabelManagedBy]; m != "" {
		found = append(found, fmt.Sprintf("managed by %q", m))
	} else {
		found = append(found, "it has no "+names.LabelManagedBy+" label")
	}
	for _, o := range svc.Metadata.OwnerReferences {
		found = append(found, fmt.Sprintf("owned by %s %s", o.Kind, o.Name))
	}
	if len(svc.Spec.Ports) > 0 && svc.Spec.Ports[0].Name != t.PortName {
		found = append(found, fmt.Sprintf("its first port is named %q", svc.Spec.Ports[0].Name))
	}
	return base + ": " + strings.Join(found, ", ") + "; the runtime will not touch it"
}
