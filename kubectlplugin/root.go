package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/sparkui/sparkui/internal/version"
	"github.com/sparkui/sparkui/kubectlplugin/uistate"
)

// env is what every command shares: the kubeconfig flags kubectl plugins take
// (cli-runtime's ConfigFlags: --kubeconfig, --context, -n, …), -A, -o, the streams and a
// clock (tests fix it).
type env struct {
	flags   *genericclioptions.ConfigFlags
	all     bool
	output  string
	streams genericiooptions.IOStreams
	now     func() time.Time
	// clients builds the clients from flags; tests replace it with fake ones.
	clients func() (kubernetes.Interface, *rest.Config, error)
}

func (e *env) namespace() (string, error) {
	if e.all {
		return "", nil
	}
	ns, _, err := e.flags.ToRawKubeConfigLoader().Namespace()
	return ns, err
}

func (e *env) defaultClients() (kubernetes.Interface, *rest.Config, error) {
	cfg, err := e.flags.ToRESTConfig()
	if err != nil {
		return nil, nil, err
	}
	cfg.UserAgent = "kubectl-sparkui/" + version.Version
	cs, err := kubernetes.NewForConfig(cfg)
	return cs, cfg, err
}

// NewRoot is `kubectl sparkui` with its commands.
func NewRoot(streams genericiooptions.IOStreams) *cobra.Command {
	root, _ := newRoot(streams)
	return root
}

func newRoot(streams genericiooptions.IOStreams) (*cobra.Command, *env) {
	e := &env{flags: genericclioptions.NewConfigFlags(true), streams: streams, now: time.Now}
	e.clients = e.defaultClients
	root := &cobra.Command{
		Use:   "kubectl-sparkui",
		Short: "Where is my Spark UI, and why not? The UIs sparkui serves, opened and explained",
		Long: `kubectl sparkui reads what sparkui left on the cluster: the UI Services the function wrote
and the runtime binds, their driver Pods and Events. It writes nothing.

  kubectl sparkui list [-A] [-o wide|json|yaml]   every application, its state and link
  kubectl sparkui open APP [--browser]            port-forward to its UI (or its History page)
  kubectl sparkui why APP                         why it is (not) reachable, on one screen`,
		Version:       version.Version,
		SilenceUsage:  true,
		SilenceErrors: false,
		Annotations: map[string]string{
			// kubectl's plugin convention: how the command is shown in usage and completion.
			cobra.CommandDisplayNameAnnotation: "kubectl sparkui",
		},
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	e.flags.AddFlags(root.PersistentFlags())
	_ = root.RegisterFlagCompletionFunc("namespace", e.completeNamespaces)
	root.AddCommand(newList(e), newOpen(e), newWhy(e))
	return root, e
}

// completeNamespaces completes -n with the cluster's namespaces.
func (e *env) completeNamespaces(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	cs, _, err := e.clients()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	l, err := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, n := range l.Items {
		out = append(out, n.Name)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeApps completes APP with the applications of the namespace.
func (e *env) completeApps(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cs, _, err := e.clients()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ns, err := e.namespace()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	apps, err := uistate.Find(context.Background(), cs, ns)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, a := range apps {
		out = append(out, fmt.Sprintf("%s\t%s", a.Name, a.State))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// oneApp resolves APP in the namespace of the flags.
func (e *env) oneApp(ctx context.Context, name string) (*uistate.App, kubernetes.Interface, *rest.Config, error) {
	cs, cfg, err := e.clients()
	if err != nil {
		return nil, nil, nil, err
	}
	if e.all {
		return nil, nil, nil, fmt.Errorf("-A names no namespace: give APP's with -n")
	}
	ns, err := e.namespace()
	if err != nil {
		return nil, nil, nil, err
	}
	a, err := uistate.Get(ctx, cs, ns, name)
	return a, cs, cfg, err
}
