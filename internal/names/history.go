package names

// The History Server hand-off (docs/history.md; pinned in the issue-15 interfaces).
const (
	// LabelHistoryRedirector labels the shared redirector's Pods; a handed-off UI Service
	// selects them with {LabelHistoryRedirector: HistoryRedirectorValue}.
	LabelHistoryRedirector = AnnotationPrefix + "history-redirector"
	HistoryRedirectorValue = "true"
	// AnnotationHistoryURI is the application's page on the History Server,
	// <url>/history/<app id>/, written by the runtime's hand-off.
	AnnotationHistoryURI = AnnotationPrefix + "history-uri"
	// AnnotationRouteHost and AnnotationRoutePrefix are the build-time facts of the route the
	// function wrote for the UI Service (its hostname, absent when any; its expanded path
	// prefix, "/" when none): the redirector matches requests by them.
	AnnotationRouteHost   = AnnotationPrefix + "route-host"
	AnnotationRoutePrefix = AnnotationPrefix + "route-prefix"
)

// RedirectorSelector is the selector of a UI Service handed off to the History Server.
func RedirectorSelector() map[string]string {
	return map[string]string{LabelHistoryRedirector: HistoryRedirectorValue}
}
