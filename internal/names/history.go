package names

// The History Server hand-off (docs/history.md); the route annotations it matches by are in route.go.
const (
	// LabelHistoryRedirector labels the shared redirector's Pods; a handed-off UI Service
	// selects them with {LabelHistoryRedirector: HistoryRedirectorValue}.
	LabelHistoryRedirector = AnnotationPrefix + "history-redirector"
	HistoryRedirectorValue = "true"
	// AnnotationHistoryURI is the application's page on the History Server,
	// <url>/history/<app id>/, written by the runtime's hand-off.
	AnnotationHistoryURI = AnnotationPrefix + "history-uri"
)

// RedirectorSelector is the selector of a UI Service handed off to the History Server.
func RedirectorSelector() map[string]string {
	return map[string]string{LabelHistoryRedirector: HistoryRedirectorValue}
}
