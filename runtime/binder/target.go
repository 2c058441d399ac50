// Package binder writes the UI Service: one guarded JSON Patch to bind it to the UI's port
// and the driver Pod, one to withdraw it. There is no read before a write and no
// resourceVersion: the patch's `test` operations are the guard, and the API server applies
// the whole patch or none of it.
package binder

import (
	"github.com/sparkui/sparkui/internal/names"
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

// Guard is the label that proves the Service is this application's: GuardKey=GuardValue when
// set, else spark-app-selector=AppID.
func (t Target) Guard() (key, value string) {
	if t.GuardKey != "" {
		return t.GuardKey, t.GuardValue
	}
	return names.LabelAppSelector, t.AppID
}
