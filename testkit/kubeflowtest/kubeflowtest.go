// Package kubeflowtest runs the real kubeflow spark-operator controller (v2.5.2, built from
// its Go module by build-spark-operator.sh) against a test control plane, with the stand-in
// spark-submit of ./sparksubmit as $SPARK_HOME/bin/spark-submit.
package kubeflowtest

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// Version is the spark-operator release build-spark-operator.sh builds.
const Version = "v2.5.2"

// Binary is where build-spark-operator.sh caches the operator.
func Binary() string {
	return filepath.Join(testcluster.CacheDir(), "spark-operator", Version, "spark-operator")
}

// Operator is a running `spark-operator controller start`.
type Operator struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  bytes.Buffer
	done chan struct{}
	// webhook is `spark-operator webhook start`, nil without Options.Webhook.
	webhook *exec.Cmd
	whDone  chan struct{}
}

// Log is what the controller has written so far (its zap log, with every spark-submit's
// arguments: submission.go logs "Running spark-submit").
func (o *Operator) Log() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.log.String()
}

func (o *Operator) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.log.Write(p)
}

// Options selects what runs beside the controller.
type Options struct {
	// Namespaces are the namespaces the controller (and webhook) manage (--namespaces).
	Namespaces []string
	// Webhook also runs `spark-operator webhook start` (webhook.go) and registers its pod
	// mutation: see startWebhook.
	Webhook bool
}

// Start builds the stand-in spark-submit, then runs the controller for namespace ns against
// c until the test ends. The controller reaches the API server through $KUBECONFIG
// (controller-runtime's ctrl.GetConfig) and gives spark-submit --master from
// KUBERNETES_SERVICE_HOST/PORT (pkg/util GetMasterURL), both set to c's API server.
// Flags (cmd/operator/controller/start.go): the UI Service on (its default), no leader
// election, no metrics or health endpoints (nothing scrapes them, and fixed ports would
// collide between packages), and the driver-pod grace period long enough for a busy machine.
func Start(t testing.TB, c *testcluster.Cluster, ns string) *Operator {
	t.Helper()
	return StartWith(t, c, Options{Namespaces: []string{ns}})
}

// StartWith is Start for opts' namespaces, with the webhook when opts.Webhook.
func StartWith(t testing.TB, c *testcluster.Cluster, opts Options) *Operator {
	t.Helper()
	bin := Binary()
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("kubeflowtest: %s missing: run `make spark-operator` (testkit/kubeflowtest/build-spark-operator.sh)", bin)
	}
	sparkHome := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(sparkHome, "bin", "spark-submit"),
		"github.com/sparkui/sparkui/testkit/kubeflowtest/sparksubmit")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("kubeflowtest: building the stand-in spark-submit: %v\n%s", err, out)
	}
	u, err := url.Parse(c.Config.Host)
	if err != nil {
		t.Fatalf("kubeflowtest: API server %q: %v", c.Config.Host, err)
	}
	kubeconfig := c.KubeconfigFile(t, c.Config)
	o := &Operator{done: make(chan struct{})}
	if opts.Webhook {
		o.webhook = startWebhook(t, c, kubeconfig, opts.Namespaces, o)
	}
	o.cmd = exec.Command(bin, "controller", "start",
		"--namespaces="+strings.Join(opts.Namespaces, ","),
		"--leader-election=false",
		"--enable-metrics=false",
		"--health-probe-bind-address=0",
		"--pprof-bind-address=0",
		"--driver-pod-creation-grace-period=30s",
		"--zap-log-level=info")
	o.cmd.Env = append(os.Environ(),
		"KUBECONFIG="+kubeconfig,
		"SPARK_HOME="+sparkHome,
		"KUBERNETES_SERVICE_HOST="+u.Hostname(),
		"KUBERNETES_SERVICE_PORT="+u.Port())
	o.cmd.Stdout, o.cmd.Stderr = o, o
	if err := o.cmd.Start(); err != nil {
		t.Fatalf("kubeflowtest: starting %s: %v", bin, err)
	}
	go func() { _ = o.cmd.Wait(); close(o.done) }()
	t.Cleanup(func() {
		_ = o.cmd.Process.Signal(os.Interrupt)
		select {
		case <-o.done:
		case <-time.After(10 * time.Second):
			_ = o.cmd.Process.Kill()
			<-o.done
		}
		if t.Failed() {
			t.Logf("spark-operator log:\n%s", o.Log())
		}
	})
	return o
}

// Exited reports whether the controller has stopped, with its log, for a test's wait loop.
func (o *Operator) Exited() error {
	select {
	case <-o.done:
		return fmt.Errorf("spark-operator exited (%v):\n%s", o.cmd.ProcessState, o.Log())
	default:
	}
	if o.whDone != nil {
		select {
		case <-o.whDone:
			return fmt.Errorf("spark-operator webhook exited (%v):\n%s", o.webhook.ProcessState, o.Log())
		default:
		}
	}
	return nil
}
