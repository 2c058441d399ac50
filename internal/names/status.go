package names

// The UI Service's status annotations (docs/service-status.md): written by the runtime in the
// same guarded patch as its bind, withdrawal and hand-off, read by kubectl-sparkui and
// wait-uri. They are written with the driver's own token, so they are the application's
// claims about itself, never trusted about another application.
const (
	AnnotationUIState  = AnnotationPrefix + "ui-state"
	AnnotationUISince  = AnnotationPrefix + "ui-since"
	AnnotationUIPod    = AnnotationPrefix + "ui-pod"
	AnnotationUIPort   = AnnotationPrefix + "ui-port"
	AnnotationUIReason = AnnotationPrefix + "ui-reason"

	UIStateWaiting   = "waiting"
	UIStateBound     = "bound"
	UIStateWithdrawn = "withdrawn"
	UIStateHandedOff = "handed-off"

	// UIReasonMax is the longest ui-reason, in characters: one line for a table column.
	UIReasonMax = 256
)
