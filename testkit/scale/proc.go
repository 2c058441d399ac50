package scale

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/testkit/podnet"
)

// pod is one application's Pod network: podnet with the stand-in driver and the runtime.
type pod struct {
	app  App
	cmd  *exec.Cmd
	done chan struct{}

	mu                      sync.Mutex
	started, ready          time.Time // the process started; the UI said "ready"
	sigterm                 time.Time
	uiPID, runtimePID       int
	tail                    []string // the last lines, for failures
	runtimeCPU              time.Duration
	runtimeRSS, runtimeAnon int64 // bytes: resident, and the anonymous part of it
}

// podSpec is what starting one application needs.
type podSpec struct {
	bins       Bins
	dir        string // the application's own directory (properties, socket, state)
	kubeconfig string
	apiAddr    string
	apiSock    string
	startup    time.Duration // the stand-in UI's "starting up" time
	props      string        // spark.properties
}

// startPod runs pod's sparkui-runtime container as the kubelet runs it, with the stand-in
// driver, in a Pod network: `unshare -rn podnet …`.
func startPod(app App, p *corev1.Pod, s podSpec) (*pod, error) {
	var ctr *corev1.Container
	for i := range p.Spec.InitContainers {
		if p.Spec.InitContainers[i].Name == sidecar.ContainerName {
			ctr = &p.Spec.InitContainers[i]
		}
	}
	if ctr == nil {
		return nil, fmt.Errorf("pod %s: no %s init container in the rendered Pod", p.Name, sidecar.ContainerName)
	}
	env, err := podnet.ContainerEnv(p, *ctr)
	if err != nil {
		return nil, err
	}
	args := podnet.ExpandArgs(ctr.Args, env)
	// The paths under the Pod's emptyDir move to the application's directory; the binary is not
	// installed for the preStop hook (the run ends by SIGTERM, and a thousand copies of it
	// would be a thousand copies of 10 MB).
	args = append(args, "--socket="+filepath.Join(s.dir, "runtime.sock"), "--install=",
		"--state-file="+filepath.Join(s.dir, "bound-port"), "--termination-log="+filepath.Join(s.dir, "termination-log"))
	propsFile := filepath.Join(s.dir, "spark.properties")
	if err := os.WriteFile(propsFile, []byte(s.props), 0o600); err != nil {
		return nil, err
	}
	ui, _ := json.Marshal([]string{s.bins.UI, "driver", "--properties-file", propsFile})
	cmd := exec.Command("unshare", append([]string{"-rn", s.bins.Podnet, s.bins.Runtime}, args...)...)
	cmd.Env = append(env, "PATH="+os.Getenv("PATH"), "KUBECONFIG="+s.kubeconfig,
		"PODNET_UI="+string(ui), "PODNET_API_ADDR="+s.apiAddr, "PODNET_API_SOCK="+s.apiSock,
		"FAKESPARK_STARTUP="+s.startup.String())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	pd := &pod{app: app, cmd: cmd, done: make(chan struct{})}
	pd.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		pd.read(out)
		_ = cmd.Wait()
		close(pd.done)
	}()
	return pd, nil
}

// read notes the lines podnet writes: the children's pids, the UI's "ready".
func (p *pod) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line, now := sc.Text(), time.Now()
		p.mu.Lock()
		switch f := strings.Fields(line); {
		case line == "ui ready":
			p.ready = now
		case len(f) == 3 && f[0] == "pid":
			n, _ := strconv.Atoi(f[2])
			if f[1] == "ui" {
				p.uiPID = n
			} else {
				p.runtimePID = n
			}
		}
		p.tail = append(p.tail, line)
		if len(p.tail) > 20 {
			p.tail = p.tail[1:]
		}
		p.mu.Unlock()
	}
}

// term sends the Pod's SIGTERM (the kubelet's, to the native sidecar) and notes when.
func (p *pod) term() {
	p.mu.Lock()
	p.sigterm = time.Now()
	p.mu.Unlock()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
}

// kill ends what is left of the Pod.
func (p *pod) kill() {
	select {
	case <-p.done:
	default:
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// sample reads the runtime's CPU time and resident memory from /proc while it runs.
func (p *pod) sample() {
	p.mu.Lock()
	pid := p.runtimePID
	p.mu.Unlock()
	cpu, rss, err := procStat(pid)
	if err != nil {
		return
	}
	anon := statusKB(pid, "RssAnon")
	p.mu.Lock()
	p.runtimeCPU, p.runtimeRSS, p.runtimeAnon = cpu, rss, anon
	p.mu.Unlock()
}

func (p *pod) lastLines() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.tail, "\n")
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux architecture
// Go supports (the kernel's ABI; sysconf(_SC_CLK_TCK) needs cgo).
const clockTick = 100

// procStat is pid's CPU time (user + system) and resident set size.
func procStat(pid int) (time.Duration, int64, error) {
	if pid <= 0 {
		return 0, 0, fmt.Errorf("no pid")
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 22 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	rssPages, _ := strconv.ParseInt(f[21], 10, 64)
	cpu := time.Duration(utime+stime) * time.Second / clockTick
	return cpu, rssPages * int64(os.Getpagesize()), nil
}

// statusKB is a kB field of /proc/<pid>/status (VmHWM: the peak resident set; RssAnon: the
// resident memory that is the process's own, without the binary's pages that every process
// of one binary shares), in bytes.
func statusKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
