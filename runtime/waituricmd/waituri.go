// Package waituricmd is `sparkui-runtime wait-uri`, for clients: it waits until the UI Service
// publishes its external URI and prints it.
package waituricmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sparkui/sparkui/internal/cli"
	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/runtime/binder"
	"github.com/sparkui/sparkui/runtime/externaluri"
	"github.com/sparkui/sparkui/runtime/verb"
)

// Command is the client command that prints the published external URI.
const Command = "wait-uri"

// waitURIBackoff spaces the reads of the Service: 200 ms doubling to 5 s, jittered.
var waitURIBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 1 << 30, Cap: 5 * time.Second}

// waitURISettings is wait-uri's command line, validated.
type waitURISettings struct {
	namespace, service, kubeconfig string
	timeout, requestTimeout        time.Duration
}

// where names the Service in messages.
func (s *waitURISettings) where() string {
	return fmt.Sprintf("Service %s/%s", s.namespace, s.service)
}

// Main waits until the UI Service carries the resolved external URI while bound and prints
// it on stdout. It reads the Service with GET (capped exponential backoff with jitter: 200 ms
// doubling to 5 s), so it needs only `get` on that Service.
func Main(args []string, stdout, stderr io.Writer) int {
	s, code, ok := parseWaitURI(args, stdout, stderr)
	if !ok {
		return code
	}
	c, err := s.client()
	if err != nil {
		fmt.Fprintf(stderr, "sparkui-runtime wait-uri: %v\n", err)
		return verb.ExitFailed
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	uri, denied, err := s.wait(ctx, c, stderr)
	if err == nil {
		fmt.Fprintln(stdout, uri)
		return verb.ExitOK
	}
	return s.failed(stdout, stderr, denied, err)
}

// parseWaitURI reads wait-uri's flags; when not ok, code is the exit code.
func parseWaitURI(args []string, stdout, stderr io.Writer) (s waitURISettings, code int, ok bool) {
	fs := flag.NewFlagSet("sparkui-runtime wait-uri", flag.ContinueOnError)
	fs.StringVar(&s.namespace, "namespace", "", "the UI Service's namespace (default: the kubeconfig context's)")
	fs.StringVar(&s.service, "service", "", "the UI Service (required)")
	fs.DurationVar(&s.timeout, "timeout", 5*time.Minute, "give up (exit 1) after this long; the other exit statuses are below")
	fs.DurationVar(&s.requestTimeout, "request-timeout", 10*time.Second, "timeout of one API server request")
	fs.StringVar(&s.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, else the in-cluster configuration, else ~/.kube/config)")
	if code, ok := cli.ParseGo(fs, Help, args, stdout, stderr); !ok {
		return s, code, false
	}
	if fs.NArg() > 0 || s.service == "" || s.timeout <= 0 {
		fmt.Fprintln(stderr, "sparkui-runtime wait-uri: takes --service (required), --namespace, a positive --timeout, --request-timeout and --kubeconfig"+cli.HelpHint)
		return s, verb.ExitUsage, false
	}
	if s.namespace == "" {
		s.namespace = contextNamespace(s.kubeconfig)
	}
	return s, verb.ExitOK, true
}

// contextNamespace is the kubeconfig context's namespace, like kubectl's default.
func contextNamespace(kubeconfig string) string {
	n, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(verb.LoadingRules(kubeconfig), &clientcmd.ConfigOverrides{}).Namespace()
	if err != nil || n == "" {
		return "default"
	}
	return n
}

func (s *waitURISettings) client() (*binder.Client, error) {
	restCfg, err := verb.RestConfig(s.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("no API server configuration: %w", err)
	}
	restCfg.UserAgent = "sparkui-runtime-wait-uri/" + version.Version
	restCfg.Timeout = s.requestTimeout
	return binder.NewClient(restCfg, binder.Target{Namespace: s.namespace, Service: s.service})
}

// wait reads the Service until it carries the external URI, telling stderr each new thing it
// sees meanwhile (the runtime's waiting state and reason, so that a wait is never silent). A
// 404 is waited out (the Service may not be created yet); a denial ends the wait at once and
// is returned as denied.
func (s *waitURISettings) wait(ctx context.Context, c *binder.Client, stderr io.Writer) (uri string, denied, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	get := func(ctx context.Context) (*externaluri.Service, bool, error) {
		svc, err := c.Get(ctx)
		switch {
		case apierrors.IsNotFound(err):
			return nil, false, nil
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			denied = err
			cancel()
		}
		return svc, err == nil, err
	}
	report := func(what string) { fmt.Fprintf(stderr, "sparkui-runtime wait-uri: %s: %s\n", s.where(), what) }
	uri, err = externaluri.Wait(ctx, get, waitURIBackoff, report)
	return uri, denied, err
}

// failed says why no URI was printed and returns the exit code that tells it.
func (s *waitURISettings) failed(stdout, stderr io.Writer, denied, err error) int {
	switch {
	case denied != nil:
		fmt.Fprintf(stderr, "sparkui-runtime wait-uri: %s: %v (wait-uri needs get on that Service)\n", s.where(), denied)
		return verb.ExitFailed
	case errors.Is(err, externaluri.ErrWithdrawn):
		fmt.Fprintf(stderr, "sparkui-runtime wait-uri: %s: %v\n", s.where(), err)
		return verb.ExitWithdrawn
	case errors.Is(err, externaluri.ErrHandedOff):
		// The application's page on the History Server is where its link now leads.
		var h *externaluri.HandedOff
		if errors.As(err, &h) && h.HistoryURI != "" {
			fmt.Fprintln(stdout, h.HistoryURI)
		}
		fmt.Fprintf(stderr, "sparkui-runtime wait-uri: %s: %v\n", s.where(), err)
		return verb.ExitHandedOff
	case errors.Is(err, externaluri.ErrDeleted):
		fmt.Fprintf(stderr, "sparkui-runtime wait-uri: %s: %v\n", s.where(), err)
		return verb.ExitDeleted
	case errors.Is(err, externaluri.ErrTimeout):
		fmt.Fprintf(stderr, "sparkui-runtime wait-uri: %s: no external URI after %s: %v\n", s.where(), s.timeout, err)
		return verb.ExitFailed
	}
	fmt.Fprintf(stderr, "sparkui-runtime wait-uri: %s: %v\n", s.where(), err)
	return verb.ExitFailed
}

// Help is `sparkui-runtime wait-uri --help` and its section of docs/cli.md.
var Help = cli.Command{
	Path:  "sparkui-runtime wait-uri",
	Short: "wait until the UI Service carries its external URI while bound, and print it",
	Usage: []string{"sparkui-runtime wait-uri --service=NAME [--namespace=NS] [--timeout=D] [--kubeconfig=FILE]"},
	Long: `Reads the Service with GET (200 ms doubling to 5 s, jittered): get on that Service is all it
needs. A Service that does not exist yet is waited for. Each new thing it sees meanwhile goes
to stderr, the runtime's waiting state and its reason included (sparkui.dev/ui-state: waiting,
docs/service-status.md); a Service withdrawn by an earlier driver Pod whose next runtime says
it is waiting is waited for, not reported withdrawn.`,
	Examples: []string{
		"sparkui-runtime wait-uri --namespace=spark-jobs --service=spark-pi-sparkui-ui-svc --timeout=10m",
	},
	Exit: []cli.Exit{
		{Code: verb.ExitOK, Meaning: "the URI, printed on stdout"},
		{Code: verb.ExitFailed, Meaning: "--timeout passed (stderr says what it last saw), or the API server refused the read (401/403)"},
		{Code: verb.ExitUsage, Meaning: "bad arguments"},
		{Code: verb.ExitWithdrawn, Meaning: "the UI Service is withdrawn (its selector has sparkui.dev/withdrawn)"},
		{Code: verb.ExitDeleted, Meaning: "the UI Service was seen, then deleted"},
		{Code: verb.ExitHandedOff, Meaning: "the UI Service is handed off to the History Server: its page (sparkui.dev/history-uri) on stdout"},
	},
	See: "docs/external-uri.md",
}
