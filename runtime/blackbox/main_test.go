// Package blackbox runs the built sparkui-fn and sparkui-runtime together against a real
// kube-apiserver and kube-controller-manager: the function's output is applied, and the runtime
// runs with exactly the args of the sidecar the function emitted, as the driver's
// ServiceAccount under the Role the function emitted.
package blackbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

var fnBin, runtimeBin string

// clusterOpts is the package's one control plane: kube-apiserver with both IP families (the
// carriers' UI Services ask for IPv6 first) and kube-controller-manager (EndpointSlices,
// garbage collection).
var clusterOpts = testcluster.Options{ControllerManager: true,
	APIServerArgs: map[string][]string{"service-cluster-ip-range": {"10.0.0.0/24,fd00:10:96::/112"}}}

func TestMain(m *testing.M) {
	if os.Getenv(podNetEnv) != "" { // this binary as a driver Pod's network (podnet_test.go)
		os.Exit(podNetMain(os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "sparkui-blackbox-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fnBin, runtimeBin = filepath.Join(dir, "sparkui-fn"), filepath.Join(dir, "sparkui-runtime")
	for bin, pkg := range map[string]string{fnBin: "../../fn", runtimeBin: ".."} {
		build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, out)
			os.Exit(1)
		}
	}
	code := testcluster.Run(m)
	_ = os.RemoveAll(dir)
	if apiRelaySock != "" {
		_ = os.RemoveAll(filepath.Dir(apiRelaySock))
	}
	os.Exit(code)
}

// input is what a pipeline feeds the function: a driver Pod under hostNetwork (so the runtime
// must prove the UI's identity: other tests' stand-in UIs listen on this machine too) with a
// random UI port, its Spark conf given in the functionConfig.
