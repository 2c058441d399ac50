package testnode

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Cgroups, the teardown and the watchdog.

const sigterm = syscall.SIGTERM

const cgroupFS = "/sys/fs/cgroup"

// hierarchies are the mounted cgroup v1 hierarchies (cpu, memory, pids, name=systemd, …).
func hierarchies() ([]string, error) {
	entries, err := os.ReadDir(cgroupFS)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(cgroupFS, e.Name())
		if _, err := os.Stat(filepath.Join(p, "cgroup.procs")); err == nil {
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cgroup hierarchy under %s", cgroupFS)
	}
	return out, nil
}

// makeCgroups creates the kubelet's cgroup root in every hierarchy (the kubelet checks that
// it exists); cpuset needs its cpus and mems before a task can join.
func (n *Node) makeCgroups() error {
	hs, err := hierarchies()
	if err != nil {
		return err
	}
	for _, h := range hs {
		d := filepath.Join(h, n.CgroupRoot)
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("cgroup %s: %w", d, err)
		}
		if filepath.Base(h) == "cpuset" {
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				v, err := os.ReadFile(filepath.Join(h, f))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(d, f), v, 0o644); err != nil {
					return fmt.Errorf("cgroup %s/%s: %w", d, f, err)
				}
			}
		}
	}
	return nil
}

// cgroupPIDs lists the processes in the node's cgroups, every hierarchy.
func (n *Node) cgroupPIDs() []int {
	hs, _ := hierarchies()
	seen := map[int]bool{}
	var out []int
	for _, h := range hs {
		_ = filepath.WalkDir(filepath.Join(h, n.CgroupRoot), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
				return nil
			}
			data, _ := os.ReadFile(p)
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
					seen[pid] = true
					out = append(out, pid)
				}
			}
			return nil
		})
	}
	return out
}

// removeCgroups removes the node's cgroup trees, deepest first.
func (n *Node) removeCgroups() error {
	hs, _ := hierarchies()
	var errs []error
	for _, h := range hs {
		root := filepath.Join(h, n.CgroupRoot)
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// dirPIDs are the processes whose command line names the node's directory: containerd's
// shims (-address <dir>/containerd.sock), and anything the harness started.
func (n *Node) dirPIDs() []int {
	matches, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	self := os.Getpid()
	var out []int
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err != nil || !strings.Contains(string(data), n.Dir) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(m)))
		if err == nil && pid != self && (n.watchdog == nil || n.watchdog.Process == nil || pid != n.watchdog.Process.Pid) {
			out = append(out, pid)
		}
	}
	return out
}

// Stop tears the node down: kubelet and kube-scheduler, every container (the processes of
// the node's cgroups), containerd and its shims, the namespace holder (the network and mount
// namespaces go with their last process: bridge, iptables rules, mounts), then the cgroups
// and the directory. It reports anything that stayed. Safe to call more than once.
func (n *Node) Stop() error {
	n.stopOnce.Do(func() { n.stopErr = n.stop() })
	return n.stopErr
}

func (n *Node) stop() error {
	var errs []error
	if n.watchdog != nil && n.watchdog.Process != nil {
		_ = n.watchdog.Process.Kill()
		_ = n.watchdog.Wait()
		_ = n.wdPipe.Close()
	}
	n.kubelet.stop(10 * time.Second)
	n.sched.stop(10 * time.Second)
	n.proxy.stop(10 * time.Second)
	for i := 0; i < 50; i++ {
		pids := n.cgroupPIDs()
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	n.ctrd.stop(10 * time.Second)
	for i := 0; i < 50; i++ {
		pids := n.dirPIDs()
		if n.holder != nil {
			pids = without(pids, n.holder.cmd.Process.Pid)
		}
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n.egress != nil {
		_ = n.egress.Close()
	}
	if n.fwd != nil {
		_ = n.fwd.Close()
	}
	n.fwdWG.Wait()
	if n.holder != nil {
		_ = n.holdPipe.Close()
		select {
		case <-n.holder.done:
		case <-time.After(10 * time.Second):
			_ = n.holder.cmd.Process.Kill()
			<-n.holder.done
		}
	}
	if pids := n.cgroupPIDs(); len(pids) > 0 {
		errs = append(errs, fmt.Errorf("processes left in the node's cgroups: %v", pids))
	}
	if pids := n.dirPIDs(); len(pids) > 0 {
		errs = append(errs, fmt.Errorf("processes naming %s left: %v", n.Dir, pids))
	}
	var cgErr error
	for i := 0; i < 20; i++ {
		if cgErr = n.removeCgroups(); cgErr == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if cgErr != nil {
		errs = append(errs, fmt.Errorf("removing cgroups %s: %w", n.CgroupRoot, cgErr))
	}
	if n.Dir != "" {
		if err := os.RemoveAll(n.Dir); err != nil {
			errs = append(errs, fmt.Errorf("removing %s (a mount left behind?): %w", n.Dir, err))
		}
	}
	return errors.Join(errs...)
}

func without(s []int, v int) []int {
	var out []int
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// watchdogScript waits for EOF on stdin (the test binary is gone), then kills what names the
// node's directory ($1) and every process of its cgroups ($2), removes the cgroups and the
// directory. The namespaces go with their last process.
const watchdogScript = `trap '' HUP INT TERM
dir=$1
cg=$2
while read -r _ignored; do :; done
killdir() {
	for f in $(grep -laF -- "$dir" /proc/[0-9]*/cmdline 2>/dev/null); do
		pid=${f#/proc/}
		pid=${pid%/cmdline}
		[ "$pid" = "$$" ] || kill -9 "$pid" 2>/dev/null
	done
}
killdir
for i in 1 2 3 4 5 6 7 8 9 10; do
	for p in $(find /sys/fs/cgroup/*"$cg" -name cgroup.procs -exec cat {} + 2>/dev/null); do
		kill -9 "$p" 2>/dev/null
	done
	sleep 0.2
done
killdir
sleep 0.5
for h in /sys/fs/cgroup/*; do
	[ -d "$h$cg" ] && find "$h$cg" -depth -type d -exec rmdir {} \; 2>/dev/null
done
rm -rf -- "$dir"
`

// startWatchdog starts the shell that cleans up after a test binary that died without Stop.
func (n *Node) startWatchdog() error {
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "sparkui-node-watchdog", n.Dir, n.CgroupRoot)
	w, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		return err
	}
	n.watchdog, n.wdPipe = cmd, w
	return nil
}
