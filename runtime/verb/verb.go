// Package verb is what every sparkui-runtime verb shares: the exit statuses, the API server
// configuration, the logger and the $SPARKUI_<FLAG> defaults. Each verb is a package of its
// own (runcmd, withdrawcmd, waituricmd, redirectcmd); package main only dispatches.
package verb

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Exit codes.
const (
	// run exits 0 whatever happened (after SIGTERM), or with Go's 2 on a panic: see runcmd.
	ExitOK          = 0
	ExitFailed      = 1 // withdraw: not acknowledged in time; wait-uri: failed
	ExitUsage       = 2 // unknown command; withdraw and wait-uri: bad arguments
	ExitUnreachable = 3 // withdraw: no runtime listens on the socket
	ExitWithdrawn   = 4 // wait-uri: the UI Service is withdrawn
	ExitDeleted     = 5 // wait-uri: the UI Service was deleted
	ExitHandedOff   = 6 // wait-uri: the UI Service is handed off to the History Server (its page on stdout)
)

// EnvDefaults sets every flag not given on the command line from SPARKUI_<FLAG>.
func EnvDefaults(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		env := EnvName(f.Name)
		if v, ok := os.LookupEnv(env); ok {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("$%s: %w", env, err))
			}
		}
	})
	return errors.Join(errs...)
}

// NewLogger is --log-format and --log-level.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: %q is neither text nor json", format)
}

// LoadingRules reads --kubeconfig, else $KUBECONFIG, else ~/.kube/config.
func LoadingRules(kubeconfig string) *clientcmd.ClientConfigLoadingRules {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	return rules
}

// RestConfig: --kubeconfig, else $KUBECONFIG (like kubectl), else the in-cluster
// configuration (whose token file client-go re-reads), else ~/.kube/config.
func RestConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" && os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		cfg, err := rest.InClusterConfig()
		if err == nil {
			return cfg, nil
		}
		if !errors.Is(err, rest.ErrNotInCluster) {
			return nil, err
		}
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(LoadingRules(kubeconfig), &clientcmd.ConfigOverrides{}).ClientConfig()
}
