package binder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sparkui/sparkui/internal/names"
)

// The kubeflow operator's labels on the Services it creates (its pkg/common/spark.go).
const (
	kubeflowGroup        = "sparkoperator.k8s.io"
	kubeflowAppLabel     = kubeflowGroup + "/app-name"
	kubeflowCreatedLabel = kubeflowGroup + "/created-by-spark-operator"
)

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

// kubeflowOwner tells a Service the kubeflow operator has written, and names its owner
// ("SparkApplication \"x\""; "" when its labels and owner do not say). Which operator wrote
// it is the owner's API group, the operator's alone (every object it makes the owner of a
// Service is one of its own resources: pkg/util/sparkapplication.go GetOwnerReference), so
// no kind is compared; the kind only names the owner in the message.
func kubeflowOwner(labels map[string]string, owners []metav1.OwnerReference) (string, bool) {
	for _, o := range owners {
		if gv, err := schema.ParseGroupVersion(o.APIVersion); err == nil && gv.Group == kubeflowGroup {
			return fmt.Sprintf("%s %q", o.Kind, o.Name), true
		}
	}
	if app := labels[kubeflowAppLabel]; app != "" {
		// GetResourceLabels: the label names the SparkApplication the Service was made for.
		return fmt.Sprintf("SparkApplication %q", app), true
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
		if kf == "" {
			kf = "an application it does not name"
		}
		found = append(found, fmt.Sprintf("the kubeflow spark-operator has taken it over as its own UI Service of %s "+
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
