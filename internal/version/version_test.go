package version

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestOneVersion: the default version is the VERSION file's, and the runtime image the
// function injects is the tag `make image-tar` / `make image` produce for it.
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
	if want := string(m[1]) + "/sparkui-runtime:" + Version; RuntimeImage() != want {
		t.Errorf("RuntimeImage() = %q, the images are tagged %q", RuntimeImage(), want)
	}
}
