package fakespark

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
)

// redirect is Jetty's sendRedirect of path resolved against the request URL, or, with
// spark.ui.proxyRedirectUri, ProxyRedirectHandler's <proxyRedirectUri><uiRoot><path>.
// conformance: proxy-redirect-uri
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, path string) {
	loc := "http://" + r.Host + path
	if r.TLS != nil {
		loc = "https://" + r.Host + path
	}
	if s.opts.ProxyRedirectURI != "" {
		loc = strings.TrimSuffix(s.opts.ProxyRedirectURI, "/") + s.uiRoot(r) + path
	}
	w.Header().Set("Location", loc)
	w.WriteHeader(http.StatusFound)
}

// filter answers like the configured filter; false when it refused the request.
// conformance: filters
func (s *Server) filter(w http.ResponseWriter, r *http.Request) bool {
	switch s.opts.Filter {
	case JWS: // ui/JWSFilter.scala
		w.Header().Set("Cache-Control", "no-cache, no-store, must-revalidate")
		h := r.Header.Get("Authorization")
		switch tok, ok := strings.CutPrefix(h, "Bearer "); {
		case h == "":
			http.Error(w, "Authorization header is missing.", http.StatusForbidden)
		case !ok:
			http.Error(w, "Malformed Authorization header.", http.StatusForbidden)
		case tok != s.opts.Token:
			http.Error(w, "JWT Validate Fail", http.StatusForbidden)
		default:
			return true
		}
		return false
	case SPNEGO:
		if r.Header.Get(s.opts.Header[0]) == s.opts.Header[1] {
			return true
		}
		w.Header().Set("WWW-Authenticate", "Negotiate")
		http.Error(w, "Authentication required", http.StatusUnauthorized)
		return false
	case SSO:
		if r.Header.Get(s.opts.Header[0]) == s.opts.Header[1] {
			return true
		}
		http.Redirect(w, r, "https://sso.example.com/login?next="+url.QueryEscape(r.URL.Path), http.StatusFound)
		return false
	}
	return true
}

// Redirector is the plain-HTTP connector of a TLS UI: it only redirects (302, Jetty's
// sendRedirect) to the same path and query on the HTTPS port, at the host the request named
// (baseRequest.getServerName: the Host header's host, an IPv6 one bracketed): JettyUtils
// createRedirectHttpsHandler and createRedirectURI, 3.5 and 4.0. No filter runs there: the
// redirect handler is Jetty's own ContextHandler, not one of the UI's servlet contexts.
// conformance: redirect-connector
type Redirector struct {
	srv  *httptest.Server
	Port int
}

// StartRedirector listens on addr ("" = 127.0.0.1:0) and redirects everything to httpsPort.
func StartRedirector(addr string, httpsPort int) (*Redirector, error) {
	return startRedirector(addr, httpsPort, "", "")
}

// startRedirector is StartRedirector behind spark.ui.proxyRedirectUri (proxyURI, "" = unset)
// with the spark.ui.proxyBase system property (proxyBase): startJettyServer wraps the whole
// handler collection, this connector's redirect handler included, in ProxyRedirectHandler,
// whose ResponseWrapper.sendRedirect writes <proxyRedirectUri><uiRoot><target path> (the https
// scheme, the port and the query dropped: JettyUtils.scala, ProxyRedirectHandler).
func startRedirector(addr string, httpsPort int, proxyURI, proxyBase string) (*Redirector, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		u := *r.URL
		u.Scheme, u.Host = "https", net.JoinHostPort(host, strconv.Itoa(httpsPort))
		loc := u.String()
		if proxyURI != "" {
			root := proxyBase
			if root == "" {
				root = r.Header.Get("X-Forwarded-Context")
			}
			loc = strings.TrimSuffix(proxyURI, "/") + root + r.URL.Path
		}
		// response.setContentLength(0); response.sendRedirect: a 302 with no body.
		w.Header().Set("Location", loc)
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusFound)
	}))
	_ = srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	return &Redirector{srv: srv, Port: ln.Addr().(*net.TCPAddr).Port}, nil
}

// Close stops it.
func (r *Redirector) Close() { r.srv.Close() }
