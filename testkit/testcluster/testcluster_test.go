package testcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMain(m *testing.M) { Main(m) }

// cluster is the control plane shared by this package's tests: one start, with
// kube-controller-manager, for all of them.
func cluster(t *testing.T) *Cluster {
	t.Helper()
	return Shared(t, Options{ControllerManager: true})
}

// fatalTB records Fatalf instead of failing the test, to check what Start does
// when the binaries are missing.
type fatalTB struct {
	testing.TB
	fatal   string
	skipped bool
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fatalTB) Skip(args ...any)                 { f.skipped = true; runtime.Goexit() }
func (f *fatalTB) Skipf(format string, args ...any) { f.skipped = true; runtime.Goexit() }
func (f *fatalTB) SkipNow()                         { f.skipped = true; runtime.Goexit() }

func TestMissingBinariesFailNotSkip(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("SPARKUI_CACHE", empty)
	if got, want := Dir(), filepath.Join(empty, "control-plane", Version); got != want {
		t.Fatalf("Dir() = %q, want %q", got, want)
	}
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(f, Options{ControllerManager: true})
		t.Error("Start returned without failing")
	}()
	<-done
	if f.skipped {
		t.Fatal("Start skipped the test on missing binaries")
	}
	for _, want := range []string{"make control-plane", "kube-apiserver", "etcd", "kube-controller-manager"} {
		if !strings.Contains(f.fatal, want) {
			t.Errorf("fatal message %q does not mention %q", f.fatal, want)
		}
	}
}

func TestStartAndStop(t *testing.T) {
	// A cluster of its own, without kube-controller-manager, stopped at the end.
	c := Start(t, Options{})
	ctx := Context(t, 30*time.Second)
	v, err := c.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != Version {
		t.Errorf("server version %s, want %s", v.GitVersion, Version)
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	kc := c.KubeconfigFile(t, c.ServiceAccountConfig(t, "ns1", "spark"))
	if data, err := os.ReadFile(kc); err != nil || !strings.Contains(string(data), c.Config.Host) {
		t.Fatalf("kubeconfig %s: %v\n%s", kc, err, data)
	}
	logDir := c.LogDir()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil { // idempotent
		t.Fatal(err)
	}
	if _, err := os.Stat(logDir); !os.IsNotExist(err) {
		t.Errorf("log dir %s left behind", logDir)
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err == nil {
		t.Error("API server still answers after Stop")
	}
}
