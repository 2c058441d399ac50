package blackbox

// tls_test.go: a driver whose UI serves HTTPS, on the real control plane. The stand-in binds
// as Spark's JettyUtils.startJettyServer does (fakespark.StartUI: the HTTPS connector, then
// spark.ui.port's plain connector that only redirects to it), with a certificate generated
// here; the built runtime runs with the args the function wrote.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/runtime/internal/fakespark"
	"github.com/sparkui/sparkui/testkit/testcluster"
)

// TestTLSBindsHTTPSConnector: configured by sparkui (spark.ssl.ui.enabled in the conf it
// reads), the runtime binds the UI Service to the HTTPS connector's port, never the redirect
// connector's, and the EndpointSlice carries that port.
func TestTLSBindsHTTPSConnector(t *testing.T) { tlsRun(t, true) }

// TestTLSNotConfigured: TLS turned on where sparkui does not read it (the image's
// spark-defaults.conf): the runtime, configured for plain HTTP, binds nothing and says why
// (the plain connector redirects to https://…, the HTTPS one speaks TLS).
func TestTLSNotConfigured(t *testing.T) { tlsRun(t, false) }

func tlsRun(t *testing.T, configured bool) {
	c := testcluster.Shared(t, clusterOpts)
	ns := c.UniqueNamespace(t)
	appID := "spark-" + ns
	in := strings.NewReplacer("NS", ns, "APPID", appID).Replace(input)
	const anchor = `      spark.ui.port: "0"`
	if strings.Count(in, anchor) != 1 {
		t.Fatal("the input changed: update the edit")
	}
	if configured {
		in = strings.Replace(in, anchor, anchor+"\n      spark.ssl.ui.enabled: \"true\"", 1)
	}
	r := renderList(t, in)
	if got := strings.Join(r.args, " "); strings.Contains(got, "--tls=true") != configured {
		t.Fatalf("runtime args %s: want --tls=%t", got, configured)
	}
	svc := applySparkui(t, c, ns, r)
	addNode(t, c, ns+"-node")
	kubectl(t, c.KubeconfigFile(t, c.Config), podDoc(t, r), "apply", "--server-side", "--field-manager=pipeline", "-f", "-")
	const ip = "192.0.2.71"
	pod := podReady(t, c, ns, "wordcount-driver", ip)

	cert, err := fakespark.NewCert("spark-driver", "127.0.0.1", "::1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	ui, err := fakespark.StartUI(fakespark.Options{AppID: appID, PodName: pod.Name, Namespace: ns, State: fakespark.Ready},
		"0.0.0.0", 0, fakespark.DefaultMaxRetries, &fakespark.SSL{Cert: cert})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ui.Close)
	d := driverRun{pod: pod, ip: ip}
	d.proc, d.sock, d.uiPort = startPodRuntime(t, c, pod, uiOptions{Server: ui.Server})
	if d.uiPort != ui.SecurePort {
		t.Fatalf("the stand-in's UI port %d is not its HTTPS port %d", d.uiPort, ui.SecurePort)
	}

	if !configured {
		testcluster.WaitFor(t, 20*time.Second, "the runtime's reason", func() (bool, string) {
			logs := d.proc.logs()
			return strings.Contains(logs, fmt.Sprintf("port=%d", ui.HTTPPort)) && strings.Contains(logs, "redirects to https://"), logs
		})
		if got := service(t, c, ns, svc); len(got.selector) != 0 {
			t.Fatalf("bound with TLS it was not configured for: %s\n%s", got, d.proc.logs())
		}
		return
	}
	bound := svcState{selector: map[string]string{names.LabelAppSelector: appID, names.LabelSparkRole: names.RoleDriver}, targetPort: strconv.Itoa(ui.SecurePort)}
	testcluster.WaitFor(t, 30*time.Second, "the runtime's bind to the HTTPS port", func() (bool, string) {
		got := service(t, c, ns, svc)
		return got.String() == bound.String(), got.String() + "\n" + d.proc.logs()
	})
	waitEndpoints(t, c, ns, svc, []string{fmt.Sprintf("%s:%d ready=true", ip, ui.SecurePort)})
}
