package names

// Route annotations on the UI Service (docs/routes.md): build-time facts of the route sparkui
// emitted for the application, read by the history redirector and by clients.
const (
	// AnnotationRouteHost is the route's hostname; absent when the route matches any host.
	AnnotationRouteHost = AnnotationPrefix + "route-host"
	// AnnotationRoutePrefix is the route's expanded path prefix, "/" when it has none.
	AnnotationRoutePrefix = AnnotationPrefix + "route-prefix"
	// HeaderForwardedContext is the request header Spark's UIUtils.uiRoot reads as the base
	// path of its links when spark.ui.proxyBase is not a system property (Knox's header).
	HeaderForwardedContext = "X-Forwarded-Context"
	// HeaderUIService names the UI Service a request was routed to: the function's HTTPRoute
	// and OpenShift Route set it (replacing any value the client sent), and the history
	// redirector answers from that Service alone. Drivers cannot write routes, so no other
	// application can claim it.
	HeaderUIService = "X-Sparkui-Service"
	// ConnectPortName names the UI Service's second port, for Spark Connect's gRPC server.
	ConnectPortName = "spark-connect"
)
