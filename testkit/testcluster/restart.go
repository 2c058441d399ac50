package testcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// An API server restart, for tests of what clients do while it is away: kube-apiserver stops
// and starts again on the same address, port, certificates, client CA, service-account keys
// and etcd, so every client configuration made before (Config, UserConfig, kubeconfig files)
// works again afterwards. etcd and kube-controller-manager keep running; the controller
// manager reconnects on its own.
//
// envtest's APIServer is restartable: Start recomputes its process state and keeps a port
// and a certificate directory already set (controller-runtime v0.25.2
// pkg/internal/testing/controlplane/apiserver.go, setProcessState "unconditionally re-set
// this so we can successfully restart", configurePorts, populateAPIServerCerts which writes
// nothing when apiserver.crt exists), and its CertAuthn keeps the client CA in memory and
// writes the same one again (auth.go, CertAuthn.Start). Stop leaves a certificate directory
// it did not make (DirNeedsCleaning is false for ours).

var errShared = errors.New("testcluster: the API server of a Shared cluster is not restarted (other tests use it): use Start")

// StopAPIServer kills kube-apiserver (SIGKILL to its process group: a crash, an OOM kill or a
// node lost under it) and waits until envtest has seen it exit. Requests fail until
// StartAPIServer. Not SIGTERM: a graceful stop with kube-controller-manager's watches open
// outlasted envtest's 30 s stop timeout here, which would make the outage the stop's length
// rather than the caller's. Refused on a Shared cluster.
func (c *Cluster) StopAPIServer() error {
	c.apiMu.Lock()
	defer c.apiMu.Unlock()
	if c.shared {
		return errShared
	}
	if c.apiDown {
		return errors.New("testcluster: the API server is already stopped")
	}
	api := c.Env.ControlPlane.APIServer
	pid := c.apiServerPID()
	if pid <= 0 {
		return fmt.Errorf("testcluster: no kube-apiserver process with --cert-dir=%s", api.CertDir)
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil { // envtest starts it in a group of its own
		return fmt.Errorf("testcluster: killing kube-apiserver: %w", err)
	}
	// envtest's Stop returns at once for a process it saw exit, and signals the group
	// otherwise: wait for the kill to be reaped, then let Stop notice it.
	deadline := time.Now().Add(stopTimeout)
	for {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		if os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("testcluster: kube-apiserver (pid %d) still there %s after SIGKILL", pid, stopTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var err error
	for range 50 { // the reaper marks it exited just after Wait returns
		if err = api.Stop(); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("testcluster: stopping kube-apiserver: %w", err)
	}
	c.apiDown = true
	return nil
}

// APIServerPID is kube-apiserver's process id, 0 when it is not running.
func (c *Cluster) APIServerPID() int {
	c.apiMu.Lock()
	defer c.apiMu.Unlock()
	if c.apiDown {
		return 0
	}
	return c.apiServerPID()
}

// apiServerPID finds kube-apiserver by its binary and certificate directory, both the
// cluster's own (envtest does not expose the process).
func (c *Cluster) apiServerPID() int {
	api := c.Env.ControlPlane.APIServer
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if args[0] != api.Path {
			continue
		}
		for _, a := range args[1:] {
			if a == "--cert-dir="+api.CertDir {
				return pid
			}
		}
	}
	return 0
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, with the same flags, and
// waits until it is healthy. Its log is appended to kube-apiserver.log.
func (c *Cluster) StartAPIServer() error {
	c.apiMu.Lock()
	defer c.apiMu.Unlock()
	if !c.apiDown {
		return errors.New("testcluster: the API server is running: StopAPIServer first")
	}
	path := filepath.Join(c.dir, "kube-apiserver.log")
	log, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("testcluster: %w", err)
	}
	defer log.Close() // the child has its own descriptor
	api := c.Env.ControlPlane.APIServer
	api.Out, api.Err = log, log // the first start's file was closed once it had started
	if err := api.Start(); err != nil {
		return fmt.Errorf("testcluster: starting kube-apiserver again: %w\n%s", err, logTail("kube-apiserver", path))
	}
	c.apiDown = false
	return nil
}
