package sidecar

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// The History Server hand-off's settings reach the runtime as environment variables (every
// flag of run reads SPARKUI_<FLAG>: --history-url, --redirector-port), not as args, so that a
// sidecar without them keeps its args byte for byte.
const (
	EnvHistoryURL     = "SPARKUI_HISTORY_URL"
	EnvRedirectorPort = "SPARKUI_REDIRECTOR_PORT"
	// DefaultRedirectorPort is the port the shared redirector listens on unless told.
	DefaultRedirectorPort = 8080
	// HistoryPathPrefix is where the History Server serves an application's UI:
	// <prefix>/<app id>[/<attempt id>] (Spark core/src/main/scala/org/apache/spark/deploy/
	// history/HistoryServer.scala, UI_PATH_PREFIX and getAttemptURI; its loaderServlet loads
	// the application and redirects to the same URI).
	HistoryPathPrefix = "/history"
)

// History is the hand-off's settings; the zero URL is "no hand-off".
type History struct {
	URL            string
	RedirectorPort int
}

// Env is the runtime container's env for h: nothing without a URL.
func (h History) Env() [][2]string {
	if h.URL == "" {
		return nil
	}
	return [][2]string{{EnvHistoryURL, h.URL}, {EnvRedirectorPort, strconv.Itoa(h.RedirectorPort)}}
}

// CheckHistoryURL accepts an absolute http or https URL with a host and without query,
// fragment or credentials: the hand-off appends /history/<app id>/ to it, and a URL published
// in an annotation must not carry a secret.
func CheckHistoryURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL: %v", s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q is not an absolute http or https URL", s)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("%q has no host", s)
	case u.User != nil:
		return fmt.Errorf("%q carries credentials: the URL is published in an annotation", s)
	case u.RawQuery != "" || u.ForceQuery:
		return fmt.Errorf("%q has a query: /history/<app id>/ is appended to the URL", s)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return fmt.Errorf("%q has a fragment: /history/<app id>/ is appended to the URL", s)
	case u.Opaque != "":
		return fmt.Errorf("%q is not a hierarchical URL", s)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || CheckRedirectorPort(n) != nil {
			return fmt.Errorf("%q: port %s is not in 1-65535", s, p)
		}
	}
	return nil
}

// CheckRedirectorPort accepts a TCP port.
func CheckRedirectorPort(p int) error {
	if p < 1 || p > 65535 {
		return fmt.Errorf("%d is not a port in 1-65535", p)
	}
	return nil
}

// HistoryURI is application appID's page on the History Server at base (checked by
// CheckHistoryURL): <base>/history/<app id>/, the id escaped as one path segment.
func HistoryURI(base, appID string) string {
	return strings.TrimRight(base, "/") + HistoryPathPrefix + "/" + url.PathEscape(appID) + "/"
}
