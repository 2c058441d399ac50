package version

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestOneVersion: the default version is the VERSION file's, and the runtime image the
// function injects is the tag `make image-tar` / `make image` give the runtime: its contract's.
func TestOneVersion(t *testing.T) {
	v, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(v)) != Version {
		t.Errorf("VERSION says %q, version.Version is %q", strings.TrimSpace(string(v)), Version)
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^REPO \?= (\S+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile has no REPO ?= line")
	}
	if want := string(m[1]) + "/sparkui-runtime:contract-" + RuntimeContract; RuntimeImage() != want {
		t.Errorf("RuntimeImage() = %q, the runtime image is tagged %q", RuntimeImage(), want)
	}
	// The Makefile reads the contract from this package's source; a rename of the const
	// would leave RUNTIME_TAG "contract-" and publish an image nobody's pods name.
	out, err := exec.Command("make", "-s", "-C", "../..", "-p", "-n", "help").Output()
	if err != nil {
		t.Fatalf("make -p: %v", err)
	}
	if !strings.Contains(string(out), "\nRUNTIME_TAG := contract-"+RuntimeContract+"\n") {
		t.Errorf("the Makefile's RUNTIME_TAG is not contract-%s", RuntimeContract)
	}
}
