package kubeflowtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// WebhookConfiguration is the MutatingWebhookConfiguration the test registers for the
// operator's webhook (--mutating-webhook-name).
const WebhookConfiguration = "sparkui-test-spark-operator-webhook"

// webhookNamespace holds the webhook's certificate Secret (--webhook-secret-namespace).
const webhookNamespace = "spark-operator"

// startWebhook runs `spark-operator webhook start` (cmd/operator/webhook/start.go) and
// registers the two mutations the chart registers that matter to a driver Pod: the Pod
// defaulter (/mutate--v1-pod, objectSelector launched-by-spark-operator=true, as the chart's
// templates/webhook/mutatingwebhookconfiguration.yaml) and the SparkApplication defaulter.
//
// How the API server reaches it: the chart points the configuration at a Service, which
// kube-apiserver dials at its ClusterIP (or, with --enable-aggregator-routing, an endpoint
// IP); the test API server runs on the host, where neither exists (the node's ClusterIPs
// live in its own network namespace, and an Endpoints address may not be loopback). So the
// configuration names the webhook by URL, https://localhost:<port>/<path>: the operator's
// own certificate (pkg/certificate Generate) always carries the DNS name "localhost", and
// its MutatingWebhookConfiguration reconciler (internal/controller/
// mutatingwebhookconfiguration) writes its CA into every webhook of the configuration it is
// named, whatever the clientConfig. Everything else is the operator's: its certificate,
// its Secret, its serving (controller-runtime's webhook server on all addresses).
func startWebhook(t testing.TB, c *testcluster.Cluster, kubeconfig string, namespaces []string, o *Operator) *exec.Cmd {
	t.Helper()
	port := freePort(t)
	certDir := t.TempDir()
	c.EnsureNamespace(t, webhookNamespace)
	ctx := testcluster.Context(t, 3*time.Minute)
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	hook := func(name, path string, rule admissionregistrationv1.RuleWithOperations, sel *metav1.LabelSelector) admissionregistrationv1.MutatingWebhook {
		u := fmt.Sprintf("https://localhost:%d%s", port, path)
		return admissionregistrationv1.MutatingWebhook{
			Name: name, AdmissionReviewVersions: []string{"v1"}, SideEffects: &none, FailurePolicy: &fail,
			TimeoutSeconds: ptr.To[int32](10), ObjectSelector: sel,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &u},
			Rules:        []admissionregistrationv1.RuleWithOperations{rule},
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: namespaces}}},
		}
	}
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: WebhookConfiguration},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			hook("mutate--v1-pod.sparkoperator.k8s.io", "/mutate--v1-pod", admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
			}, &metav1.LabelSelector{MatchLabels: map[string]string{"sparkoperator.k8s.io/launched-by-spark-operator": "true"}}),
			hook("mutate-sparkoperator-k8s-io-v1beta2-sparkapplication.sparkoperator.k8s.io",
				"/mutate-sparkoperator-k8s-io-v1beta2-sparkapplication", admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"sparkoperator.k8s.io"}, APIVersions: []string{"v1beta2"}, Resources: []string{"sparkapplications"}},
				}, nil),
		},
	}
	if _, err := c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("kubeflowtest: %v", err)
	}
	cmd := exec.Command(Binary(), "webhook", "start",
		"--namespaces="+strings.Join(namespaces, ","),
		"--webhook-port="+strconv.Itoa(port),
		"--webhook-cert-dir="+certDir,
		"--webhook-secret-namespace="+webhookNamespace,
		"--webhook-svc-namespace="+webhookNamespace,
		"--mutating-webhook-name="+WebhookConfiguration,
		"--validating-webhook-name="+WebhookConfiguration,
		"--leader-election=false",
		"--enable-metrics=false",
		"--health-probe-bind-address=0",
		"--zap-log-level=info")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = o, o
	if err := cmd.Start(); err != nil {
		t.Fatalf("kubeflowtest: starting the webhook: %v", err)
	}
	o.whDone = make(chan struct{})
	go func() { _ = cmd.Wait(); close(o.whDone) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-o.whDone:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-o.whDone
		}
		_ = c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), WebhookConfiguration, metav1.DeleteOptions{})
	})
	// Ready: the operator wrote its CA into the configuration and serves a certificate that
	// CA verifies for "localhost", as the API server will check it.
	testcluster.WaitFor(t, 2*time.Minute, "the spark-operator webhook serving with its CA registered", func() (bool, string) {
		if err := o.Exited(); err != nil {
			t.Fatal(err)
		}
		got, err := c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, WebhookConfiguration, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ca := got.Webhooks[0].ClientConfig.CABundle
		if len(ca) == 0 {
			return false, "no caBundle yet"
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return false, "caBundle is not PEM"
		}
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", net.JoinHostPort("localhost", strconv.Itoa(port)),
			&tls.Config{RootCAs: pool, ServerName: "localhost"})
		if err != nil {
			return false, err.Error()
		}
		_ = conn.Close()
		return true, ""
	})
	return cmd
}

// freePort is a TCP port free on the loopback now (the webhook binds all addresses; other
// tests on the machine pick theirs the same way).
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("kubeflowtest: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
