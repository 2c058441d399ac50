package helmplugin

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"debug/macho"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/testkit/helmtest"
)

// platforms are the packages make helm-plugin writes (package.sh's default PLATFORMS).
var platforms = []platform{
	{"linux", "amd64", elf.EM_X86_64, 0},
	{"linux", "arm64", elf.EM_AARCH64, 0},
	{"darwin", "amd64", 0, macho.CpuAmd64},
	{"darwin", "arm64", 0, macho.CpuArm64},
}

// platform is one of platforms.
type platform struct {
	os, arch string
	elf      elf.Machine
	macho    macho.Cpu
}

// crossPlatform is the platform of platforms whose OS and architecture both differ from this
// machine's. The tests build sparkui-fn for it and for this machine only: each cold cross
// build of sparkui-fn compiles its whole dependency graph again (about 110 s of CPU, measured),
// and the two cover both of fn's OS-specific file sets (helmstderr_linux.go,
// helmstderr_other.go) and both architectures. `make helm-plugin` builds all four.
func crossPlatform() platform {
	for _, p := range platforms {
		if p.os != runtime.GOOS && p.arch != runtime.GOARCH {
			return p
		}
	}
	panic("no platform of package.sh's default differs from " + runtime.GOOS + "/" + runtime.GOARCH + " in OS and architecture")
}

// TestPackageDefaultPlatforms: platforms is package.sh's default PLATFORMS, the packages a
// release (make helm-plugin) writes.
func TestPackageDefaultPlatforms(t *testing.T) {
	b, err := os.ReadFile("package.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^PLATFORMS="\$\{PLATFORMS:-([^}]*)\}"$`).FindSubmatch(b)
	var want []string
	for _, p := range platforms {
		want = append(want, p.os+"/"+p.arch)
	}
	if m == nil {
		t.Fatal("package.sh sets no default PLATFORMS")
	}
	if string(m[1]) != strings.Join(want, " ") {
		t.Errorf("package.sh's default PLATFORMS is %q, the tests know %q", m[1], strings.Join(want, " "))
	}
}

// untar reads a .tgz into its entries' names (directories end in /) and regular files' bytes.
func untar(t *testing.T, path string) (names []string, files map[string][]byte, modes map[string]int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files, modes = map[string][]byte{}, map[string]int64{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := h.Name
		if h.Typeflag == tar.TypeDir {
			name += "/"
		}
		names = append(names, name)
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name], modes[h.Name] = b, h.Mode
		}
	}
	sort.Strings(names)
	return names, files, modes
}

// TestPackage: package.sh (make helm-plugin) writes, with the real `helm plugin package`, one
// tarball per platform (here this machine's and crossPlatform) named as Helm names it,
// holding sparkui/plugin.yaml with the VERSION and that platform's one platformCommand, and that platform's sparkui-fn (checked by its ELF or
// Mach-O header). Helm refuses to install an unsigned tarball unless told --verify=false, then
// lists the plugin as a postrenderer/v1.
func TestPackage(t *testing.T) {
	out, log := packagedAll(t)
	v := version(t)
	cross := crossPlatform()
	for _, p := range platforms {
		if p != cross && (p.os != runtime.GOOS || p.arch != runtime.GOARCH) {
			continue
		}
		t.Run(p.os+"-"+p.arch, func(t *testing.T) {
			tgz := filepath.Join(out, p.os+"-"+p.arch, "sparkui-"+v+".tgz")
			if !strings.Contains(log, "Successfully packaged plugin and saved it to: "+tgz) {
				t.Errorf("helm plugin package did not report %s:\n%s", tgz, log)
			}
			names, files, modes := untar(t, tgz)
			if d := cmp.Diff([]string{"sparkui/", "sparkui/bin/", "sparkui/bin/sparkui-fn", "sparkui/plugin.yaml"}, names); d != "" {
				t.Errorf("tarball entries (-want +got):\n%s", d)
			}
			py, err := yaml.Parse(string(files["sparkui/plugin.yaml"]))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{
				"apiVersion": "v1", "type": "postrenderer/v1", "name": "sparkui", "version": v, "runtime": "subprocess",
				"sourceURL": "https://github.com/sparkui/sparkui",
				"runtimeConfig": map[string]any{"platformCommand": []any{map[string]any{
					"os": p.os, "arch": p.arch, "command": "${HELM_PLUGIN_DIR}/bin/sparkui-fn", "args": []any{"helm-postrenderer"},
				}}},
			}
			got, _ := py.Map()
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("plugin.yaml (-want +got):\n%s", d)
			}
			bin := files["sparkui/bin/sparkui-fn"]
			if modes["sparkui/bin/sparkui-fn"]&0o111 == 0 {
				t.Errorf("sparkui-fn mode %o is not executable", modes["sparkui/bin/sparkui-fn"])
			}
			if p.os == "linux" {
				f, err := elf.NewFile(bytes.NewReader(bin))
				if err != nil || f.Machine != p.elf {
					t.Errorf("sparkui-fn is not a %s ELF binary: %v %v", p.arch, err, f)
				}
			} else {
				f, err := macho.NewFile(bytes.NewReader(bin))
				if err != nil || f.Cpu != p.macho {
					t.Errorf("sparkui-fn is not a %s Mach-O binary: %v %v", p.arch, err, f)
				}
			}
		})
	}

	host := filepath.Join(out, runtime.GOOS+"-"+runtime.GOARCH, "sparkui-"+v+".tgz")
	h := helmtest.NewHome(t)
	r := h.Run("", nil, "plugin", "install", host)
	if r.Err == nil || !strings.Contains(r.Stderr, "plugin verification failed: no provenance file (.prov) found") {
		t.Errorf("an unsigned tarball installed with verification on: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	h.MustRun(t, "", nil, "plugin", "install", host, "--verify=false")
	list := h.MustRun(t, "", nil, "plugin", "list")
	if !strings.Contains(list, "sparkui") || !strings.Contains(list, v) || !strings.Contains(list, "postrenderer/v1") {
		t.Errorf("helm plugin list:\n%s", list)
	}
	// Another platform's package installs (Helm does not look at platforms then) but cannot run.
	other := cross.os + "-" + cross.arch
	h2 := helmtest.NewHome(t)
	h2.MustRun(t, "", nil, "plugin", "install", filepath.Join(out, other, "sparkui-"+v+".tgz"), "--verify=false")
	r = h2.Run("", nil, "template", release, chart, "--post-renderer", "sparkui")
	if r.Err == nil || !strings.Contains(r.Stderr, "no plugin command is applicable") {
		t.Errorf("the %s package ran on %s/%s: %v\n%s", other, runtime.GOOS, runtime.GOARCH, r.Err, r.Stderr)
	}
}

// TestPackageSigned: with SIGN_KEY, package.sh signs with a GnuPG key (a throwaway one made
// here), writes the .prov beside the tarball, and `helm plugin install` verifies it against the
// public keyring and installs.
func TestPackageSigned(t *testing.T) {
	helm := helmtest.Require(t)
	if _, err := exec.LookPath("gpg"); err != nil {
		t.Fatal("gpg is required to make the signing key: apt-get install -y gnupg")
	}
	gnupg := t.TempDir()
	gpg := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command("gpg", append([]string{"--batch", "--homedir", gnupg}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("gpg %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out
	}
	const uid = "sparkui test <test@sparkui.dev>"
	gpg("--passphrase", "", "--quick-gen-key", uid, "rsa2048", "sign", "never")
	secring, pubring := filepath.Join(gnupg, "secring.gpg"), filepath.Join(gnupg, "pubring.gpg")
	// Helm reads the legacy keyring files (helm.sh/helm/v4 pkg/provenance/sign.go), which
	// GnuPG 2.1+ no longer keeps: exported as its docs say.
	if err := os.WriteFile(secring, gpg("--export-secret-keys"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubring, gpg("--export"), 0o600); err != nil {
		t.Fatal(err)
	}

	out := t.TempDir()
	cmd := exec.Command("bash", "package.sh")
	cmd.Env = append(os.Environ(), "HELM="+helm, "OUT="+out, "PLATFORMS="+runtime.GOOS+"/"+runtime.GOARCH,
		"SIGN_KEY="+uid, "KEYRING="+secring)
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("package.sh: %v\n%s", err, log)
	}
	tgz := filepath.Join(out, runtime.GOOS+"-"+runtime.GOARCH, "sparkui-"+version(t)+".tgz")
	if !strings.Contains(string(log), "Successfully signed. Signature written to: "+tgz+".prov") {
		t.Errorf("not signed:\n%s", log)
	}
	h := helmtest.NewHome(t)
	got := h.MustRun(t, "", nil, "plugin", "install", tgz, "--keyring", pubring)
	for _, want := range []string{"Verifying plugin signature...", "Signed by: " + uid, "Plugin Hash Verified: sha256:", "Installed plugin: sparkui"} {
		if !strings.Contains(got, want) {
			t.Errorf("helm plugin install lacks %q:\n%s", want, got)
		}
	}
	// A tarball changed after signing is refused.
	b, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tgz, append(b, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	r := helmtest.NewHome(t).Run("", nil, "plugin", "install", tgz, "--keyring", pubring)
	if r.Err == nil || !strings.Contains(r.Stderr, "plugin verification failed: sha256 sum does not match for sparkui-"+version(t)+".tgz") {
		t.Errorf("a tarball changed after signing: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
}
