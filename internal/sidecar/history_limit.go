package sidecar

import "fmt"

// The hand-off publishes <url>/history/<app id>/ twice: as the UI Service's
// sparkui.dev/history-uri annotation, which the runtime's withdrawal patch writes at the end
// of the run, and as the Location of the redirector's 302. Its length is bounded at build
// time, where a failure is a SUI014 instead of a patch the API server refuses when the run is
// over.
const (
	// MaxHistoryURI is the longest URI the hand-off may publish: the 8000 octets that RFC 9110
	// (section 4.1) recommends every sender and recipient of a URI support, so that any client
	// or proxy between the user and the History Server follows the redirect. It is also far
	// inside the API server's bound on an object's annotations, 256 KiB for every key and value
	// together (k8s.io/apimachinery pkg/api/validation, TotalAnnotationSizeLimitB), which the
	// Service's other annotations share.
	MaxHistoryURI = 8000
	// MaxAppIDLength is the longest application id the bound allows for. In cluster mode the
	// id is the driver Pod's spark-app-selector label value (a kubeflow or Apache
	// SparkApplication's too: the operator runs spark-submit), which the API server bounds at
	// 63 characters (a label value); Spark's own ids are shorter ("spark-" and 32 hex digits,
	// "spark-application-<millis>", "local-<millis>").
	MaxAppIDLength = 63
	// MaxHistoryURL is the longest historyServer.url: the URI less /history/, the id and the
	// closing slash.
	MaxHistoryURL = MaxHistoryURI - len(HistoryPathPrefix) - len("/") - MaxAppIDLength - len("/")
)

// CheckHistoryURLLength refuses a History Server URL whose hand-off URI could pass
// MaxHistoryURI.
func CheckHistoryURLLength(s string) error {
	if len(s) > MaxHistoryURL {
		return fmt.Errorf("is %d characters long: at most %d, so that <url>/history/<app id>/ (an id of up to %d characters) stays within the %d octets every HTTP client and proxy supports in a URI (RFC 9110) and fits the UI Service's annotations at hand-off",
			len(s), MaxHistoryURL, MaxAppIDLength, MaxHistoryURI)
	}
	return nil
}
