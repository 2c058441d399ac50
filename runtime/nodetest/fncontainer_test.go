package nodetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/sparkui/sparkui/testkit/testcluster"
	"github.com/sparkui/sparkui/testkit/testnode"
)

// fnImage is the function's image on the node: ./fn built once, packed by internal/ociimage as
// `make image-tar` packs it (entrypoint /sparkui-fn, user 65532).
const fnImage = "ghcr.io/sparkui/sparkui-fn:test"

// TestFunctionContainerOnNode: the function's image run by the node's container runtime, two
// ways, each byte for byte against the same binary run directly on the same input:
//   - as a KRM function is run in container mode (kpt's internal/fnruntime/container.go runs
//     `docker|podman|nerdctl run --rm -i --network none --user nobody
//     --security-opt=no-new-privileges <image>` with the ResourceList on stdin): `ctr run` on
//     the node's containerd (the daemon the kubelet uses, the image the kubelet would run): a
//     fresh network namespace with nothing in it, read-only root, containerd's default seccomp
//     profile, the image's own non-root user, under the node's cgroup root, the ResourceList
//     built from examples/spark-submit on stdin; stdout, stderr and the exit status compared;
//   - as a Pod the kubelet runs (CRI, runc, seccomp RuntimeDefault, non-root, read-only root
//     filesystem, every capability dropped, no ServiceAccount token): standalone mode on
//     examples/spark-submit's files mounted from a ConfigMap; its stdout and stderr are read
//     back from the kubelet's log file (CRI format) and compared, and its exit code.
func TestFunctionContainerOnNode(t *testing.T) {
	fn := mustBuild(t, "./fn")
	n := testnode.Start(t, testnode.Options{Images: []testnode.Image{{Ref: fnImage, Name: "sparkui-fn", Binary: fn}}, NoKubeProxy: true})
	dir := t.TempDir()
	bin := filepath.Join(dir, "sparkui-fn")
	if err := os.WriteFile(bin, fn, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, manifests := example(t, "spark-submit/fn-config.yaml"), example(t, "spark-submit/manifests.yaml")

	// 1. The KRM container contract: ResourceList in, ResourceList out.
	rl := resourceList(t, cfg, manifests)
	want, wantErr, wantCode := runBinary(t, rl, bin)
	if !bytes.Contains(want, []byte("kind: ResourceList")) || !bytes.Contains(want, []byte("-ui-svc")) {
		t.Fatalf("the binary's own ResourceList output has no UI Service:\n%s", want)
	}
	id := fmt.Sprintf("sparkui-fn-%d", time.Now().UnixNano())
	fifo := filepath.Join(n.Dir, "ctr-fifo")
	if err := os.MkdirAll(fifo, 0o700); err != nil {
		t.Fatal(err)
	}
	ctr := func(args ...string) *exec.Cmd {
		return n.Command(append([]string{"ctr", "--address", n.ContainerdSocket(), "--namespace", "k8s.io"}, args...)...)
	}
	cmd := ctr("run", "--rm", "--read-only", "--seccomp", "--fifo-dir", fifo, "--cgroup", n.CgroupRoot+"/"+id, fnImage, id)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// ctr forwards stdin to the task's FIFO only once the task runs; what is written and
	// closed earlier never reaches it (testkit/imagetest waits the same way).
	testcluster.WaitFor(t, time.Minute, "the function's task running", func() (bool, string) {
		ls, _ := ctr("tasks", "ls").CombinedOutput()
		for _, line := range strings.Split(string(ls), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == id && f[2] == "RUNNING" {
				return true, ""
			}
		}
		select {
		case err := <-done:
			t.Fatalf("ctr run ended before its task ran: %v\n%s", err, errb.String())
		default:
		}
		return false, string(ls)
	})
	_, _ = in.Write(rl)
	in.Close()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("ctr run %s: no exit 2 minutes after its input was written\nstdout: %s\nstderr: %s", fnImage, out.String(), errb.String())
	}
	code := exitCode(err)
	if err != nil && code < 0 {
		t.Fatalf("ctr run %s: %v\n%s", fnImage, err, errb.String())
	}
	t.Logf("ctr run on the node's containerd: %s (exit %d)", time.Since(started).Round(time.Millisecond), code)
	if code != wantCode {
		t.Errorf("ctr run exited %d, the binary %d; stderr:\n%s", code, wantCode, errb.String())
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("the image under ctr run wrote other bytes than the binary:\n%s", cmp.Diff(string(want), out.String()))
	}
	// ctr passes the container's stderr through: the function's one line per finding.
	if !bytes.Equal(errb.Bytes(), wantErr) {
		t.Errorf("the image's stderr under ctr run differs from the binary's:\n%s", cmp.Diff(string(wantErr), errb.String()))
	}

	// 2. A Pod: standalone mode on files.
	const ns = "fn"
	n.PrepareNamespace(t, ns)
	ctx := testcluster.Context(t, 3*time.Minute)
	c := n.Cluster
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "fn-input"},
		Data:       map[string]string{"fn-config.yaml": cfg, "manifests.yaml": manifests},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sparkui-fn"},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{
				Name: "fn", Image: fnImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Args:         []string{"/in/fn-config.yaml", "/in/manifests.yaml"},
				VolumeMounts: []corev1.VolumeMount{{Name: "in", MountPath: "/in", ReadOnly: true}},
				SecurityContext: &corev1.SecurityContext{
					RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
			}},
			Volumes: []corev1.Volume{{Name: "in", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "fn-input"}}}}},
		},
	}
	created := time.Now()
	if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var podCode int32
	testcluster.WaitFor(t, 2*time.Minute, "the function's Pod terminated", func() (bool, string) {
		p, err := c.Client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, cs := range p.Status.ContainerStatuses {
			if x := cs.State.Terminated; x != nil {
				podCode = x.ExitCode
				return true, ""
			}
		}
		return false, podWhy(p)
	})
	t.Logf("the function as a Pod: created → terminated %s (exit %d)", time.Since(created).Round(time.Millisecond), podCode)
	want, wantErr, wantCode = runBinary(t, nil, bin, filepath.Join("..", "..", "examples", "spark-submit", "fn-config.yaml"),
		filepath.Join("..", "..", "examples", "spark-submit", "manifests.yaml"))
	raw, err := n.PodLog(ns, pod.Name, "fn")
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := criStreams(raw)
	if err != nil {
		t.Fatal(err)
	}
	if int(podCode) != wantCode {
		t.Errorf("the Pod's container exited %d, the binary %d", podCode, wantCode)
	}
	if stdout != string(want) {
		t.Errorf("the function's Pod wrote other bytes than the binary:\n%s", cmp.Diff(string(want), stdout))
	}
	if stderr != string(wantErr) {
		t.Errorf("the function's Pod's stderr differs from the binary's:\n%s", cmp.Diff(string(wantErr), stderr))
	}
	if !strings.Contains(stdout, "-ui-svc") {
		t.Errorf("the Pod's output has no UI Service:\n%s", stdout)
	}
}

// resourceList is a config.kubernetes.io/v1 ResourceList: the manifests' documents as items,
// the functionConfig as functionConfig.
func resourceList(t *testing.T, cfg, manifests string) []byte {
	t.Helper()
	var items []any
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(manifests, -1) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if len(m) > 0 {
			items = append(items, m)
		}
	}
	var fc map[string]any
	if err := yaml.Unmarshal([]byte(cfg), &fc); err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(map[string]any{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items, "functionConfig": fc})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runBinary runs the function's binary on the machine: stdout, stderr, exit code.
func runBinary(t *testing.T, stdin []byte, bin string, args ...string) ([]byte, []byte, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := exitCode(err)
	if err != nil && code < 0 {
		t.Fatalf("%s: %v", bin, err)
	}
	return out.Bytes(), errb.Bytes(), code
}

// exitCode is a command's exit status; -1 when it did not run to an exit.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if x, ok := err.(*exec.ExitError); ok && x.Exited() {
		return x.ExitCode()
	}
	return -1
}

// criStreams splits a container log in the CRI format containerd's CRI plugin writes
// (containerd pkg/cri/io/logger.go, redirectLogs: `<RFC 3339 time> <stdout|stderr> <P|F>
// <content>\n`; F: the content was followed by a newline, which is not written; P: a part of a
// line longer than the maximum, or the last bytes of a stream that did not end in a newline)
// back into the bytes the container wrote to each stream. ("\r\n" reads back as "\n": the
// function writes none.)
func criStreams(raw string) (stdout, stderr string, err error) {
	var out, errs strings.Builder
	for _, line := range strings.SplitAfter(raw, "\n") {
		if line == "" {
			continue
		}
		if !strings.HasSuffix(line, "\n") {
			return "", "", fmt.Errorf("CRI log line without newline: %q", line)
		}
		f := strings.SplitN(strings.TrimSuffix(line, "\n"), " ", 4)
		if len(f) < 3 {
			return "", "", fmt.Errorf("CRI log line %q", line)
		}
		content := ""
		if len(f) == 4 {
			content = f[3]
		}
		if f[2] == "F" {
			content += "\n"
		} else if f[2] != "P" {
			return "", "", fmt.Errorf("CRI log line tag %q in %q", f[2], line)
		}
		switch f[1] {
		case "stdout":
			out.WriteString(content)
		case "stderr":
			errs.WriteString(content)
		default:
			return "", "", fmt.Errorf("CRI log stream %q in %q", f[1], line)
		}
	}
	return out.String(), errs.String(), nil
}
