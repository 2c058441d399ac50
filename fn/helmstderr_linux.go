package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// toHelmStderr writes msg to the standard error of the Helm that runs this post-renderer.
//
// Helm 4 (v4.3.1) gives a subprocess post-renderer a bytes.Buffer as its stderr and never reads
// it: on a non-zero exit its error is only `plugin "sparkui" exited with error`
// (helm.sh/helm/v4 internal/plugin/runtime_subprocess.go, runPostrenderer and executeCmd,
// which looks at exec.ExitError.Stderr, empty when cmd.Stderr is set). The one way left to the
// user is Helm's own stderr, reachable on Linux as /proc/<parent>/fd/2.
//
// Only when Helm is the parent (it sets HELM_PLUGIN_NAME for every plugin it runs), and not
// into a regular file that Helm writes without O_APPEND (`helm … 2>err.log`): our new open file
// description would write at the end while Helm keeps writing at its own offset, over these
// lines. A terminal, a pipe, or a file opened for append get them whole; a socket cannot be
// opened through /proc and gets nothing. Best effort: any failure leaves things as Helm has them.
func toHelmStderr(msg []byte) {
	if len(msg) == 0 || os.Getenv("HELM_PLUGIN_NAME") == "" {
		return
	}
	ppid := os.Getppid()
	if ppid <= 1 {
		return
	}
	writeParentStderr(fmt.Sprintf("/proc/%d", ppid), msg)
}

// writeParentStderr writes msg to proc/fd/2 (proc is a /proc/<pid> directory) unless it is a
// regular file without O_APPEND in proc/fdinfo/2.
func writeParentStderr(proc string, msg []byte) bool {
	st, err := os.Stat(proc + "/fd/2")
	if err != nil {
		return false
	}
	if st.Mode().IsRegular() {
		flags, ok := fdFlags(proc + "/fdinfo/2")
		if !ok || flags&syscall.O_APPEND == 0 {
			return false
		}
	}
	f, err := os.OpenFile(proc+"/fd/2", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Write(msg)
	return err == nil
}

// fdFlags reads the "flags:" line of a /proc/<pid>/fdinfo/<fd> file (octal, proc(5)).
func fdFlags(path string) (int, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "flags:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			return int(n), err == nil
		}
	}
	return 0, false
}
