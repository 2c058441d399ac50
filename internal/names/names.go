// Package names holds sparkui's pinned names, labels and annotations, and the rule that makes
// a derived object name a valid, non-clashing DNS-1035 label.
package names

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels and annotations (stable: docs/external-uri.md, docs/operators.md).
const (
	LabelManagedBy   = "app.kubernetes.io/managed-by"
	ManagedByValue   = "sparkui"
	LabelAppSelector = "spark-app-selector"
	LabelSparkRole   = "spark-role"
	RoleDriver       = "driver"

	AnnotationPrefix = "sparkui.dev/"
	// WithdrawnSelectorKey is the selector key the runtime sets to withdraw a Service: a
	// selector that matches nothing empties the EndpointSlices, a removed one does not.
	WithdrawnSelectorKey = AnnotationPrefix + "withdrawn"
	// AnnotationProvideExternalURI asks an outside controller to resolve the UI's URI.
	AnnotationProvideExternalURI = AnnotationPrefix + "provide-external-uri"
	// AnnotationResolvedExternalURI is where the resolved URI is written.
	AnnotationResolvedExternalURI = AnnotationPrefix + "resolved-external-uri"

	AnnotationLocalConfig = "config.kubernetes.io/local-config"

	// AnnotationFluxSSA set to FluxSSAIfNotPresent makes Flux's kustomize-controller create
	// the object when it is missing and never apply it again while it exists: no patch, no
	// drift correction, no cleanup of field managers (fluxcd/kustomize-controller
	// api/v1/kustomization_types.go IfNotPresentValue and internal/controller/
	// kustomization_controller.go, func apply, which sets ApplyOptions.IfNotPresentSelector to
	// it; fluxcd/pkg/ssa manager_apply.go shouldSkipApply and manager_diff.go shouldSkipDiff
	// skip an existing object that matches, comparing the value case-insensitively
	// (utils/meta.go AnyInMetadata)). The UI Service needs it because Flux normalizes every
	// object through its typed form before applying, which turns the targetPort the function
	// leaves out into targetPort 0, defaulted by the API server to the port: without it each
	// reconcile would reset the runtime's bind.
	AnnotationFluxSSA   = "kustomize.toolkit.fluxcd.io/ssa"
	FluxSSAIfNotPresent = "IfNotPresent"

	// Group of the typed functionConfig.
	ConfigGroup = "sparkui.dev"
	ConfigKind  = "SparkUIService"
)

// Spark's own names.
const (
	DriverContainer    = "spark-kubernetes-driver"
	DriverSvcSuffix    = "-driver-svc"
	DriverPodSuffix    = "-driver"
	SparkConfVolume    = "spark-conf-volume-driver"
	SparkPropertiesKey = "spark.properties"
	UIPortName         = "spark-ui"
	UIPortNameTLS      = "https"
)

// Suffixes of the objects sparkui adds for an application.
const (
	UISvcSuffix  = "-ui-svc"
	BinderSuffix = "-ui-svc-binder"
)

const maxLabel = validation.DNS1035LabelMaxLength

// Prefix is the application prefix sparkui names its objects after: the driver Service's name
// without "-driver-svc" (Spark shortens that Service's name for long app names, and the UI
// Service should sit beside it), else the driver Pod's name without "-driver".
func Prefix(driverSvcName, podName string) string {
	if p, ok := strings.CutSuffix(driverSvcName, DriverSvcSuffix); ok && p != "" {
		return p
	}
	if p, ok := strings.CutSuffix(podName, DriverPodSuffix); ok && p != "" {
		return p
	}
	return podName
}

// Fit returns prefix+suffix when that is a valid DNS-1035 label not reported taken; otherwise
// a deterministic variant: the prefix cleaned, truncated and followed by a short hash of the
// original prefix (and of the attempt, while the result is taken), then the suffix.
func Fit(prefix, suffix string, taken func(string) bool) string {
	name := prefix + suffix
	if len(validation.IsDNS1035Label(name)) == 0 && (taken == nil || !taken(name)) {
		return name
	}
	clean := sanitize(prefix)
	for attempt := 0; ; attempt++ {
		seed := prefix
		if attempt > 0 {
			seed = prefix + "#" + strconv.Itoa(attempt)
		}
		h := shortHash(seed)
		room := maxLabel - len(suffix) - len(h) - 1
		head := clean
		if len(head) > room {
			head = strings.TrimRight(head[:room], "-")
		}
		var candidate string
		if head == "" {
			candidate = "s" + h + suffix
		} else {
			candidate = head + "-" + h + suffix
		}
		if taken == nil || !taken(candidate) {
			return candidate
		}
	}
}

// LabelValue returns s when it is a valid label value; otherwise a deterministic valid one:
// s with every character a label value refuses made '-', cut to leave room for '-' and a short
// hash of s, trimmed to start and end with a letter or digit. The build-time identity label
// of a carrier (sparkui.dev/application) takes the object's name, which for a custom resource
// or a workload may be up to 253 characters, and a label value is at most 63
// (validation.IsValidLabelValue); the runtime's guard and selector use this same value.
func LabelValue(s string) string {
	if len(validation.IsValidLabelValue(s)) == 0 {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '-'
		}
	}
	h := shortHash(s)
	head := string(b)
	if room := validation.LabelValueMaxLength - len(h) - 1; len(head) > room {
		head = head[:room]
	}
	head = strings.TrimFunc(head, func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	if head == "" {
		return h
	}
	return head + "-" + h
}

// shortHash is the 8 hex digits that keep a shortened name or label value distinct.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:8]
}

// sanitize lowers a name to DNS-1035 characters and makes it start with a letter.
func sanitize(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '-'
		}
	}
	out := strings.Trim(string(b), "-")
	if out != "" && (out[0] < 'a' || out[0] > 'z') {
		out = "s-" + out
	}
	return out
}
