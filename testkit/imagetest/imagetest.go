// Package imagetest starts what the tests of the images and of the function's container mode
// share: the distribution registry `make registry` builds, on a loopback port, and a private
// podman (its own store and configuration) for `kpt fn eval --image`. Its own tests (package
// imagetest_test) check the images `make image-tar` writes; testkit/fluxtest pushes Flux OCI
// artifacts to the same registry, and catalog/ runs the catalog examples in container mode.
package imagetest

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sparkui/sparkui/testkit/testcluster"
)

// RegistryVersion is the distribution release testkit/registry/build-registry.sh builds.
const RegistryVersion = "v3.1.2"

// AptPodman installs podman the way .ci/setup.sh does.
const AptPodman = "apt-get install -y --no-install-recommends podman"

// StartRegistry starts the distribution registry on a loopback port, with its storage in a
// test directory, and returns its address (host:port); it is stopped when the test ends. A
// registry not built is a failure naming the command that builds it.
func StartRegistry(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(testcluster.CacheDir(), "registry", RegistryVersion, "registry")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the distribution registry %s is not built (%v): run `make registry` (testkit/registry/build-registry.sh)", RegistryVersion, err)
	}
	port, err := testcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	config := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: %s
`, filepath.Join(dir, "data"), addr)
	cfg := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cmd := exec.Command(bin, "serve", cfg)
	// The registry's OpenTelemetry setup would export traces to an OTLP collector by default.
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none", "OTEL_LOGS_EXPORTER=none")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Stop(t, "registry", cmd) })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("registry on %s not answering /v2/ within 30 s (%v):\n%s", addr, err, log.String())
		}
	}
}

// Stop ends a process the test started, by its PID: SIGTERM, then SIGKILL after 10 s.
func Stop(t testing.TB, what string, cmd *exec.Cmd) {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Logf("%s (pid %d) ignored SIGTERM for 10 s; killing it", what, cmd.Process.Pid)
		cmd.Process.Kill()
		<-done
	}
}

// PodmanEnv is the environment of a private podman: its own storage, run and lock directories,
// and a registries.conf that allows plain HTTP to the loopback registry only. kpt passes its
// environment on to podman (internal/fnruntime/container.go: exec.CommandContext without Env).
// Rootful podman gives a container RLIMIT_NOFILE and RLIMIT_NPROC of 1048576 unless
// containers.conf says otherwise (podman's docs, options/ulimit.md), which runc cannot set
// here without CAP_SYS_RESOURCE ("error setting rlimit type 6: operation not permitted"; the
// podman process itself ran with NPROC 32768 on this machine), so the configuration asks for
// small limits any machine grants; a function is one process with a few files open.
func PodmanEnv(t testing.TB, registry string) []string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"storage.conf": fmt.Sprintf("[storage]\ndriver = \"overlay\"\ngraphroot = %q\nrunroot = %q\n",
			filepath.Join(dir, "graph"), filepath.Join(dir, "run")),
		"containers.conf": fmt.Sprintf(`[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = %q
tmp_dir = %q
volume_path = %q
static_dir = %q
lock_type = "file"
runtime = "runc"
[network]
network_config_dir = %q
`, filepath.Join(dir, "events.log"), filepath.Join(dir, "tmp"),
			filepath.Join(dir, "volumes"), filepath.Join(dir, "static"), filepath.Join(dir, "net")),
		"registries.conf": fmt.Sprintf("unqualified-search-registries = []\n[[registry]]\nlocation = %q\ninsecure = true\n", registry),
	}
	for f, content := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(),
		"KPT_FN_RUNTIME=podman",
		"CONTAINERS_STORAGE_CONF="+filepath.Join(dir, "storage.conf"),
		"CONTAINERS_CONF="+filepath.Join(dir, "containers.conf"),
		"CONTAINERS_REGISTRIES_CONF="+filepath.Join(dir, "registries.conf"),
	)
	t.Cleanup(func() {
		// Removes the images and unmounts the overlay store, so the temp dir can go.
		cmd := exec.Command("podman", "system", "reset", "--force")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("podman system reset: %v\n%s", err, out)
		}
	})
	return env
}
