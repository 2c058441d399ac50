// Command podnet is a driver Pod's two containers in the Pod's own network, for the tests that
// run many Pods without a node (testkit/scale): started as `unshare -rn podnet RUNTIME ARGS…`,
// it brings lo up, serves the API server's address on lo through the unix socket
// $PODNET_API_SOCK (podnet.APIRelay in the host's network), starts the stand-in driver
// ($PODNET_UI: a JSON argv) and the runtime (its own args), and forwards SIGTERM to the runtime
// alone, as the kubelet signals a native sidecar. When the runtime has exited, the driver is
// stopped and podnet exits with the runtime's code.
//
// Every line either child writes comes out prefixed "ui " or "runtime ", and podnet says
// "pid ui N" and "pid runtime N" (the host's pid namespace is shared) so the caller can read
// their CPU time and memory in /proc.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"

	"github.com/sparkui/sparkui/testkit/podnet"
)

var outMu sync.Mutex

func pipe(prefix string, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		outMu.Lock()
		fmt.Printf("%s %s\n", prefix, sc.Text())
		outMu.Unlock()
	}
}

func start(prefix string, argv []string) (*exec.Cmd, *sync.WaitGroup, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); pipe(prefix, out) }()
	outMu.Lock()
	fmt.Printf("pid %s %d\n", prefix, cmd.Process.Pid)
	outMu.Unlock()
	return cmd, &wg, nil
}

func main() {
	fail := func(err error) { fmt.Fprintln(os.Stderr, "podnet:", err); os.Exit(1) }
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: PODNET_UI='[argv]' PODNET_API_ADDR=host:port PODNET_API_SOCK=path podnet RUNTIME ARGS…"))
	}
	var ui []string
	if err := json.Unmarshal([]byte(os.Getenv("PODNET_UI")), &ui); err != nil || len(ui) == 0 {
		fail(fmt.Errorf("PODNET_UI must be a JSON argv: %v", err))
	}
	if err := podnet.ServeAPI(os.Getenv("PODNET_API_ADDR"), os.Getenv("PODNET_API_SOCK")); err != nil {
		fail(err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	uiCmd, uiOut, err := start("ui", ui)
	if err != nil {
		fail(err)
	}
	rt, rtOut, err := start("runtime", os.Args[1:])
	if err != nil {
		_ = uiCmd.Process.Kill()
		fail(err)
	}
	go func() {
		for s := range sigs {
			_ = rt.Process.Signal(s)
		}
	}()
	rtOut.Wait()
	_ = rt.Wait()
	_ = uiCmd.Process.Signal(syscall.SIGTERM)
	uiOut.Wait()
	_ = uiCmd.Wait()
	os.Exit(rt.ProcessState.ExitCode())
}
