package sparkapi

import (
	"net/http"
	"strings"
)

// attachingRedirect: a redirect of /api/v1/… to <basePath>/jobs/ comes from the UI's root
// context while SparkUI.attachAllHandlers adds the UI's handlers one by one (core's
// ui/SparkUI.scala: initialize() adds createRedirectHandler("/", "/jobs/") before
// ApiRootResource's "/api" context). JettyUtils.createServletHandler maps that redirect
// servlet at "/" of context "/", and Jetty's ContextHandlerCollection.handle picks the
// longest context path that prefixes the target, "/" matching every target: until "/api" is
// added every /api/v1 request is redirected (Jetty 9.4 and 10 alike). Not yet, not a filter.
func attachingRedirect(req *http.Request, resp *http.Response) bool {
	loc, err := resp.Location()
	return err == nil && strings.HasPrefix(req.URL.Path, "/api/v1/") && strings.HasSuffix(loc.Path, "/jobs/")
}

// httpsRedirect: the plain connector of a TLS UI redirects every request to the same path on
// the HTTPS port (core/src/main/scala/org/apache/spark/ui/JettyUtils.scala,
// createRedirectHttpsHandler). With spark.ui.proxyRedirectUri set, startJettyServer puts
// ProxyRedirectHandler in front of the whole handler collection, that redirect handler
// included, and its ResponseWrapper.sendRedirect rewrites every Location to
// <proxyRedirectUri><uiRoot><the target's path>: scheme, port and query are lost, only the
// request's path survives at the end. No other handler redirects an /api/v1/… request to a
// path ending in that same path; a filter's redirect goes to its login page.
func (p *Prober) httpsRedirect(req *http.Request, resp *http.Response) bool {
	loc, err := resp.Location()
	if err != nil || req.URL.Scheme != "http" {
		return false
	}
	if loc.Scheme == "https" && loc.Path == req.URL.Path {
		return true
	}
	return strings.HasPrefix(req.URL.Path, "/api/v1/") && strings.HasSuffix(loc.Path, req.URL.Path)
}
