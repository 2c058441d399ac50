// Package fluxtest holds what the tests that stand for Flux share: where `make flux` puts the
// Flux CLI, and kustomize-controller's apply options for github.com/fluxcd/pkg/ssa.
//
// kustomize-controller (fluxcd/kustomize-controller, internal/controller/
// kustomization_controller.go, read at commit 00ed487) builds a Kustomization's path with
// fluxcd/pkg/kustomize's SecureBuild, whose krusty options carry
// kustypes.DisabledPluginConfig() (fluxcd/pkg kustomize/kustomize_generator.go, func Build):
// no exec or container KRM function, no legacy plugin, ever runs in the cluster. Then, in its
// func apply, it normalizes the objects through their typed form and applies them with
// ssa.ResourceManager.ApplyAllStaged and the options ApplyOptions returns. The Flux CLI's
// `flux build kustomization` calls the same Build (fluxcd/flux2 internal/build/build.go, func
// do) and adds the same owner labels, which is why the recipe in docs/deploy-flux.md can show
// in CI exactly what the controller will apply.
package fluxtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fluxcd/pkg/ssa"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// Version is the Flux CLI testkit/fluxtest/build-flux.sh builds.
const Version = "v2.9.5"

// kustomize-controller's names: its API group (api/v1 GroupVersion) and field manager
// (main.go controllerName).
const (
	Group   = "kustomize.toolkit.fluxcd.io"
	Manager = "kustomize-controller"
	// SSAAnnotation is the per-object apply policy (values Override, Merge, IfNotPresent,
	// Ignore).
	SSAAnnotation = Group + "/ssa"
)

// Bin is the Flux CLI `make flux` built. Missing, it fails the test with the command that
// builds it.
func Bin(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(testcluster.CacheDir(), "flux", Version, "flux")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the Flux CLI %s is not built (%v): run `make flux` (testkit/fluxtest/build-flux.sh)", Version, err)
	}
	return bin
}

// ApplyOptions are the options kustomize-controller's func apply passes to ApplyAllStaged for
// a Kustomization with spec.force as given: its exclusion, IfNotPresent and force selectors,
// and the cleanup of kubectl's traces and of its own pre-SSA manager (the runtime's manager,
// sparkui-runtime, is not among them).
func ApplyOptions(force bool) ssa.ApplyOptions {
	o := ssa.DefaultApplyOptions()
	o.Force = force
	o.ExclusionSelector = map[string]string{Group + "/reconcile": "disabled", SSAAnnotation: "Ignore"}
	o.IfNotPresentSelector = map[string]string{SSAAnnotation: "IfNotPresent"}
	o.ForceSelector = map[string]string{Group + "/force": "enabled"}
	o.Cleanup = ssa.ApplyCleanupOptions{
		Annotations: []string{corev1.LastAppliedConfigAnnotation, Group + "/checksum", "fluxcd.io/sync-checksum"},
		Labels:      []string{"fluxcd.io/sync-gc-mark"},
		FieldManagers: []ssa.FieldManager{
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationApply},
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: "before-first-apply", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: Manager, OperationType: metav1.ManagedFieldsOperationUpdate},
		},
		Exclusions: map[string]string{SSAAnnotation: "Merge"},
	}
	return o
}
