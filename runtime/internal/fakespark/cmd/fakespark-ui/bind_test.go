package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/sparkui/sparkui/runtime/internal/fakespark"
)

// takenRun listens on every address at n consecutive free ports and returns the first.
func takenRun(t *testing.T, n int) int {
	t.Helper()
next:
	for attempt := 0; attempt < 200; attempt++ {
		// Below the kernel's ephemeral range (32768–60999 by default), so that the free ports
		// after the run are not handed to a parallel test's outgoing connection meanwhile (one
		// took base+1 once); 10000–31000 leaves room for userPort(base, 400).
		base := 10000 + rand.IntN(21000)
		l, err := net.Listen("tcp", fmt.Sprintf("0.0.0.0:%d", base))
		if err != nil {
			continue
		}
		ls := []net.Listener{l}
		for i := 1; i < n; i++ {
			li, err := net.Listen("tcp", fmt.Sprintf("0.0.0.0:%d", base+i))
			if err != nil {
				for _, x := range ls {
					x.Close()
				}
				continue next
			}
			ls = append(ls, li)
		}
		t.Cleanup(func() {
			for _, x := range ls {
				x.Close()
			}
		})
		return base
	}
	t.Fatal("no run of free ports")
	return 0
}

// TestBindUIMovesLikeSpark: a taken fixed port moves to port+1, port+2 … (Spark's
// startServiceOnPort), and after maxRetries collisions the start fails naming the retries.
func TestBindUIMovesLikeSpark(t *testing.T) {
	base := takenRun(t, 2)
	srv, err := bindUI(fakespark.Options{AppID: "app"}, base, 16, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if srv.Port != base+2 {
		t.Errorf("bound %d, want %d (base %d and base+1 taken)", srv.Port, base+2, base)
	}

	base = takenRun(t, 3)
	_, err = bindUI(fakespark.Options{AppID: "app"}, base, 2, nil)
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "failed after 2 retries") {
		t.Errorf("three ports taken, maxRetries 2: %v, want EADDRINUSE and failed after 2 retries", err)
	}

	srv, err = bindUI(fakespark.Options{AppID: "app"}, 0, 16, nil)
	if err != nil || srv.Port == 0 {
		t.Fatalf("a random port: %v", err)
	}
	srv.Close()
}

// TestSSLOptions: SSLOptions.parse for spark.ssl.ui over spark.ssl: enabled and
// needClientAuth inherit, the port does not.
func TestSSLOptions(t *testing.T) {
	for _, tc := range []struct {
		props      map[string]string
		on, need   bool
		port       int
		wantErrSub string
	}{
		{props: map[string]string{}},
		{props: map[string]string{"spark.ssl.enabled": "true", "spark.ssl.port": "9443"}, on: true},
		{props: map[string]string{"spark.ssl.enabled": "true", "spark.ssl.ui.enabled": "false"}},
		{props: map[string]string{"spark.ssl.ui.enabled": "true", "spark.ssl.ui.port": "4443", "spark.ssl.needClientAuth": "true"}, on: true, need: true, port: 4443},
		{props: map[string]string{"spark.ssl.ui.enabled": "true", "spark.ssl.ui.port": "-1"}, wantErrSub: "non-negative"},
	} {
		ssl, err := sslOptions(tc.props)
		if tc.wantErrSub != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErrSub) {
				t.Errorf("%v: error %v, want %q", tc.props, err, tc.wantErrSub)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.props, err)
		}
		if (ssl != nil) != tc.on {
			t.Errorf("%v: SSL %v, want on=%t", tc.props, ssl, tc.on)
			continue
		}
		if ssl != nil && (ssl.NeedClientAuth != tc.need || ssl.Port != tc.port || ssl.Cert.Leaf == nil) {
			t.Errorf("%v: needClientAuth %t port %d cert %v, want %t %d and a certificate", tc.props, ssl.NeedClientAuth, ssl.Port, ssl.Cert.Leaf != nil, tc.need, tc.port)
		}
	}
}

// TestBindUISSL: with SSL on, spark.ui.port's connector redirects and the HTTPS one sits at
// userPort(port, 400); a random port is retried too.
func TestBindUISSL(t *testing.T) {
	ssl, err := sslOptions(map[string]string{"spark.ssl.enabled": "true"})
	if err != nil {
		t.Fatal(err)
	}
	base := takenRun(t, 1) + 1 // free, its predecessor taken
	ui, err := bindUI(fakespark.Options{AppID: "app", State: fakespark.Ready}, base, 16, ssl)
	if err != nil {
		t.Fatal(err)
	}
	defer ui.Close()
	if ui.HTTPPort != base || ui.SecurePort != fakespark.UserPort(base, 400) {
		t.Fatalf("ports %d/%d, want %d/%d", ui.HTTPPort, ui.SecurePort, base, base+400)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/api/v1/applications?x=1", base))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := fmt.Sprintf("https://127.0.0.1:%d/api/v1/applications?x=1", ui.SecurePort); resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
		t.Errorf("plain connector: %s %q, want 302 %q", resp.Status, resp.Header.Get("Location"), want)
	}
}

// TestUIOptionsProxyBase: spark.ui.proxyBase counts only as a system property (submitted),
// not when a session builder sets it.
func TestUIOptionsProxyBase(t *testing.T) {
	t.Setenv("FAKESPARK_BUILDER_CONF", "spark.ui.proxyBase=/from-builder,spark.app.id=builder-id")
	opts, conf, _, _ := uiOptions(map[string]string{"spark.ui.port": "4041"})
	if opts.ProxyBase != "" || opts.AppID != "builder-id" || conf["spark.ui.proxyBase"] != "/from-builder" {
		t.Errorf("builder conf: proxyBase %q app id %q", opts.ProxyBase, opts.AppID)
	}
	opts, _, port, retries := uiOptions(map[string]string{"spark.ui.proxyBase": "/submitted", "spark.ui.port": "4041"})
	if opts.ProxyBase != "/submitted" || port != 4041 || retries != 16 {
		t.Errorf("submitted: proxyBase %q port %d retries %d", opts.ProxyBase, port, retries)
	}
}
