// Package argocdcmp runs a Config Management Plugin's commands the way Argo CD's
// argocd-cmp-server runs them, for tests: argo-cd's cmp-server (module
// github.com/argoproj/argo-cd/v3) cannot be built here (docs/deploy-argocd.md, "What ran"), so
// its contract is reproduced from its source (argoproj/argo-cd, read at 37ee0097):
//
//   - cmpserver/plugin/config.go: plugin.yaml is a ConfigManagementPlugin with metadata.name and
//     spec.generate.command required; spec.init, spec.discover (fileName, find.glob,
//     find.command/args) optional.
//   - cmpserver/plugin/plugin.go runCommand: exec of command[0] with command[1:] then args (no
//     shell unless the plugin names one), working directory the Application's path inside the
//     received repository, environment the sidecar's own followed by the request's entries,
//     stdout the result with one trailing newline trimmed, stderr only in the error
//     ("`<args>` failed <cause>: <stderr>"), and at the request's deadline SIGTERM to the
//     command's process group, SIGKILL 5 s later.
//   - generateManifest: init (if any), then generate, whose stdout is split into YAML/JSON
//     objects (gitops-engine kube.SplitYAMLToString): anything else fails the generation.
//   - matchRepository: discover.fileName is a filepath.Glob under the app's path; find.command
//     matches when it prints anything.
//   - reposerver/repository/repository.go newEnv and getPluginEnvs: the ARGOCD_APP_* build
//     environment, KUBE_VERSION and KUBE_API_VERSIONS, then each plugin env entry as
//     ARGOCD_ENV_<name>.
package argocdcmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/yaml"
)

// Command is a plugin command: the executable and its arguments, then Args.
type Command struct {
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

// Plugin is plugin.yaml.
type Plugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version  string  `json:"version"`
		Init     Command `json:"init,omitempty"`
		Generate Command `json:"generate"`
		Discover struct {
			FileName string `json:"fileName"`
			Find     struct {
				Command
				Glob string `json:"glob"`
			} `json:"find"`
		} `json:"discover"`
		PreserveFileMode bool `json:"preserveFileMode,omitempty"`
	} `json:"spec"`
}

// Name is the name an Application's spec.source.plugin.name uses: metadata.name, with
// "-<spec.version>" when a version is set (cmpserver/plugin/config.go, Address).
func (p *Plugin) Name() string {
	if p.Spec.Version != "" {
		return p.Metadata.Name + "-" + p.Spec.Version
	}
	return p.Metadata.Name
}

// Read parses and validates plugin.yaml as ReadPluginConfig does (strictly: an unknown field
// is an error here, so a typo in our own file fails a test).
func Read(path string) (*Plugin, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p Plugin
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case p.Metadata.Name == "":
		return nil, fmt.Errorf("%s: metadata.name should be non-empty", path)
	case p.Kind != "ConfigManagementPlugin":
		return nil, fmt.Errorf("%s: kind should be ConfigManagementPlugin, found %s", path, p.Kind)
	case len(p.Spec.Generate.Command) == 0:
		return nil, fmt.Errorf("%s: spec.generate command should be non-empty", path)
	}
	return &p, nil
}

// App is what the repo server knows of the Application when it asks the plugin.
type App struct {
	Name, Namespace, Project string
	Revision                 string // the resolved commit
	RepoURL, Path            string // spec.source.repoURL and .path
	TargetRevision           string // spec.source.targetRevision
	KubeVersion              string // the destination's version, e.g. 1.37.2
	APIVersions              []string
	PluginEnv                [][2]string // spec.source.plugin.env, name and value
}

// Env is the request's environment for app, in the repo server's order.
func (a App) Env() []string {
	short := func(n int) string {
		if len(a.Revision) > n {
			return a.Revision[:n]
		}
		return a.Revision
	}
	env := []string{
		"ARGOCD_APP_NAME=" + a.Name,
		"ARGOCD_APP_NAMESPACE=" + a.Namespace,
		"ARGOCD_APP_PROJECT_NAME=" + a.Project,
		"ARGOCD_APP_REVISION=" + a.Revision,
		"ARGOCD_APP_REVISION_SHORT=" + short(7),
		"ARGOCD_APP_REVISION_SHORT_8=" + short(8),
		"ARGOCD_APP_SOURCE_REPO_URL=" + a.RepoURL,
		"ARGOCD_APP_SOURCE_PATH=" + a.Path,
		"ARGOCD_APP_SOURCE_TARGET_REVISION=" + a.TargetRevision,
		"KUBE_VERSION=" + a.KubeVersion,
		"KUBE_API_VERSIONS=" + strings.Join(a.APIVersions, ","),
	}
	for _, e := range a.PluginEnv {
		// The repo server substitutes $VARS of the build environment in the value (Envsubst);
		// the tests' values hold none.
		env = append(env, "ARGOCD_ENV_"+e[0]+"="+e[1])
	}
	return env
}

// CmdError is runCommand's error: the command line, the cause and the command's stderr.
type CmdError struct {
	Args, Stderr string
	Cause        error
}

func (e *CmdError) Error() string {
	s := fmt.Sprintf("`%s` failed %v", e.Args, e.Cause)
	if e.Stderr != "" {
		s += ": " + e.Stderr
	}
	return s
}

// fatalTimeout is how long runCommand lets a command's process group live after SIGTERM.
const fatalTimeout = 5 * time.Second

// Run runs c in dir with the sidecar's environment followed by env; at ctx's end the command's
// process group gets SIGTERM, then SIGKILL. It returns stdout without its trailing newline,
// and stderr (argocd-cmp-server logs it).
func Run(ctx context.Context, c Command, dir string, env []string) (stdout, stderr string, err error) {
	if len(c.Command) == 0 {
		return "", "", errors.New("Command is empty")
	}
	cmd := exec.Command(c.Command[0], append(append([]string{}, c.Command[1:]...), c.Args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	var out, serr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &serr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return "", "", err
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-time.After(fatalTimeout):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			case <-done:
			}
		case <-done:
		}
	}()
	err = cmd.Wait()
	close(done)
	stdout = strings.TrimSuffix(out.String(), "\n")
	if err != nil {
		return stdout, serr.String(), &CmdError{Args: strings.Join(cmd.Args, " "), Stderr: strings.TrimSpace(serr.String()), Cause: err}
	}
	return stdout, serr.String(), nil
}

// Generate runs init and generate in appPath and returns the manifests, one string per object,
// as the cmp-server returns them to the repo server.
func (p *Plugin) Generate(ctx context.Context, appPath string, env []string) (manifests []string, stderr string, err error) {
	if len(p.Spec.Init.Command) > 0 {
		if _, stderr, err = Run(ctx, p.Spec.Init, appPath, env); err != nil {
			return nil, stderr, err
		}
	}
	out, stderr, err := Run(ctx, p.Spec.Generate, appPath, env)
	if err != nil {
		return nil, stderr, err
	}
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(out), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, stderr, fmt.Errorf("the generated manifests: %w", err)
	}
	for _, n := range nodes {
		if n.GetApiVersion() == "" || n.GetKind() == "" {
			return nil, stderr, fmt.Errorf("the generated manifests: an object without apiVersion or kind:\n%s", n.MustString())
		}
		manifests = append(manifests, n.MustString())
	}
	return manifests, stderr, nil
}

// Discover says whether the plugin claims the Application at appPath: discover.fileName as a
// glob under it, else find.command printing anything. find.glob (with ** patterns, zglob in
// the cmp-server) is not reproduced: our plugin does not use it.
func (p *Plugin) Discover(ctx context.Context, appPath string, env []string) (bool, error) {
	d := p.Spec.Discover
	switch {
	case d.FileName != "":
		m, err := filepath.Glob(filepath.Join(appPath, d.FileName))
		return len(m) > 0, err
	case d.Find.Glob != "":
		return false, errors.New("discover.find.glob is not reproduced by testkit/argocdcmp")
	case len(d.Find.Command.Command) > 0:
		out, _, err := Run(ctx, d.Find.Command, appPath, env)
		return out != "", err
	}
	return false, errors.New("the plugin has no discovery rule: Applications must name it")
}
