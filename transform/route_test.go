package transform

import "testing"

// TestWantProxyConf: proxyBase is the prefix (none at the root); the redirect base is "/"
// under a prefix, https://<host> where TLS ends before Spark, a scheme the user chose for
// this host is kept, a stale host is replaced, and at the root without TLS whatever is set
// stays.
func TestWantProxyConf(t *testing.T) {
	for _, tc := range []struct {
		f              routeFacts
		cur            string
		base, redirect string
	}{
		{routeFacts{prefix: "/"}, "", "", ""},
		{routeFacts{prefix: "/"}, "http://mine", "", "http://mine"},
		{routeFacts{prefix: "/s/a"}, "", "/s/a", "/"},
		{routeFacts{prefix: "/s/a", host: "h.example.com"}, "https://h.example.com", "/s/a", "https://h.example.com"},
		{routeFacts{prefix: "/s/a", host: "h.example.com"}, "https://old.example.com", "/s/a", "/"},
		{routeFacts{prefix: "/", host: "h.example.com", tls: true}, "", "", "https://h.example.com"},
		{routeFacts{prefix: "/", host: "h.example.com", tls: true}, "http://h.example.com", "", "https://h.example.com"},
		{routeFacts{prefix: "/u", host: "h.example.com", tls: true}, "/", "/u", "https://h.example.com"},
	} {
		cur := map[string]string{}
		if tc.cur != "" {
			cur[KeyProxyRedirectURI] = tc.cur
		}
		base, redirect := wantProxyConf(tc.f, cur)
		if base != tc.base || redirect != tc.redirect {
			t.Errorf("%+v with %q: %q, %q; want %q, %q", tc.f, tc.cur, base, redirect, tc.base, tc.redirect)
		}
	}
}

// TestCheckPathPrefix: the Gateway API's PathPrefix value rules plus no trailing slash.
func TestCheckPathPrefix(t *testing.T) {
	for p, want := range map[string]string{
		"/":                         "",
		"/spark/{namespace}/{name}": "",
		"/a-b_c.d~e":                "",
		"spark":                     "is not an absolute path (it must start with /)",
		"/a//b":                     "has an empty path segment (//)",
		"/a/./b":                    "has a . segment",
		"/a/{nam":                   "has an unclosed {",
		"/a/}":                      "has a } without {",
		"/a?b":                      "has the character '?', which a path prefix match does not accept",
		"/a#b":                      "has the character '#', which a path prefix match does not accept",
		"/{namespace}/":             "ends with /: Spark's links would start with // (write it without the trailing slash)",
	} {
		if got := CheckPathPrefix(p); got != want {
			t.Errorf("CheckPathPrefix(%q) = %q, want %q", p, got, want)
		}
	}
}
