package fakespark

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

var noFollow = &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func get(t *testing.T, url string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestProxyBase: like Spark with spark.ui.proxyBase, the stand-in serves at the root paths
// (the REST API included), prefixes the links it writes, and redirects "/" to "/jobs/"
// without the prefix unless spark.ui.proxyRedirectUri is set.
func TestProxyBase(t *testing.T) {
	s, err := Start(Options{AppID: "spark-1", State: Ready, ProxyBase: "/apps/wc"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := "http://" + s.Addr
	if resp, body := get(t, base+"/api/v1/applications", nil); resp.StatusCode != 200 || !strings.Contains(body, `"id":"spark-1"`) {
		t.Errorf("REST API at the root: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get(t, base+"/apps/wc/api/v1/applications", nil); resp.StatusCode == 200 {
		t.Error("the REST API is served under the proxy base too; Spark serves it at the root only")
	}
	if resp, body := get(t, base+"/jobs/", nil); resp.StatusCode != 200 || !strings.Contains(body, `href="/apps/wc/jobs/"`) || !strings.Contains(body, `href="/apps/wc/static/webui.css"`) {
		t.Errorf("page links: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get(t, base+"/", nil); resp.StatusCode != 302 || resp.Header.Get("Location") != base+"/jobs/" {
		t.Errorf("root redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := get(t, base+"/jobs", nil); resp.StatusCode != 302 || resp.Header.Get("Location") != base+"/jobs/" {
		t.Errorf("context root redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	// No proxyBase: X-Forwarded-Context is the root; proxyRedirectUri rewrites redirects.
	s2, err := Start(Options{AppID: "spark-2", State: Ready, ProxyRedirectURI: "https://spark.example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	base2 := "http://" + s2.Addr
	hdr := map[string]string{"X-Forwarded-Context": "/apps/wc2"}
	if _, body := get(t, base2+"/jobs/", hdr); !strings.Contains(body, `href="/apps/wc2/stages/"`) {
		t.Errorf("X-Forwarded-Context links: %s", body)
	}
	if resp, _ := get(t, base2+"/", hdr); resp.StatusCode != 302 || resp.Header.Get("Location") != "https://spark.example.com/apps/wc2/jobs/" {
		t.Errorf("proxyRedirectUri: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, body := get(t, base2+"/jobs/", nil); !strings.Contains(body, `href="/jobs/"`) {
		t.Errorf("no proxy base: %s", body)
	}
}
