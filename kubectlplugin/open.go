package main

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	streamhttp "k8s.io/streaming/pkg/httpstream"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/kubectlplugin/uistate"
)

type openOpts struct {
	browser bool
	address string
	port    int
}

func newOpen(e *env) *cobra.Command {
	var o openOpts
	c := &cobra.Command{
		Use:   "open APP",
		Short: "port-forward to APP's UI and print its URL (a handed-off application: its History page)",
		Long: `open forwards a local port to the port the UI really bound: the UI Service's targetPort,
which the runtime keeps on the live UI, on the Pod the Service selects (as kubectl port-forward
does, through the API server). It prints the URL and forwards until interrupted. An application
whose run ended and was handed off to the History Server has no UI to forward to: open prints
its History page instead.`,
		Example: `  kubectl sparkui open spark-pi -n analytics
  kubectl sparkui open spark-pi --browser --port 4040`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: e.completeApps,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			a, cs, cfg, err := e.oneApp(ctx, args[0])
			if err != nil {
				return err
			}
			return o.run(ctx, e, a, cs, cfg)
		},
	}
	c.Flags().BoolVar(&o.browser, "browser", false, "also open the URL in the default browser")
	c.Flags().StringVar(&o.address, "address", "127.0.0.1", "local address to listen on")
	c.Flags().IntVar(&o.port, "port", 0, "local port (0: a free one)")
	return c
}

func (o openOpts) run(ctx context.Context, e *env, a *uistate.App, cs kubernetes.Interface, cfg *rest.Config) error {
	out := e.streams.Out
	switch a.State {
	case uistate.HandedOff:
		if a.Links.History == "" {
			return fmt.Errorf("%s was handed off to the History Server but its Service has no %s annotation", a.Name, names.AnnotationHistoryURI)
		}
		fmt.Fprintf(e.streams.ErrOut, "%s's run has ended; its UI was handed off to the History Server:\n", a.Name)
		fmt.Fprintln(out, a.Links.History)
		if o.browser {
			return openBrowser(a.Links.History)
		}
		return nil
	case uistate.Bound:
	default:
		return fmt.Errorf("%s's UI is %s, not bound: nothing to forward to (kubectl sparkui why %s -n %s)", a.Name, a.State, a.Name, a.Namespace)
	}
	if a.Pod == nil || a.Pod.Status.Phase != corev1.PodRunning {
		return fmt.Errorf("%s is bound but its driver Pod is not running (%s): kubectl sparkui why %s -n %s", a.Name, a.PodNote, a.Name, a.Namespace)
	}
	remote, err := remotePort(a)
	if err != nil {
		return err
	}
	scheme := "http"
	if a.Service.Spec.Ports[0].Name == names.UIPortNameTLS {
		scheme = "https"
	}
	// kubectl port-forward's dialer (k8s.io/kubectl pkg/cmd/portforward createDialer):
	// SPDY over WebSocket first, SPDY when the upgrade fails or a proxy refuses it.
	url := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(a.Pod.Namespace).Name(a.Pod.Name).SubResource("portforward").URL()
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return err
	}
	dialer := spdy.NewDialerForStreaming(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	tunneling, err := portforward.NewSPDYOverWebsocketDialerForStreaming(url, cfg)
	if err != nil {
		return err
	}
	dialer = portforward.NewFallbackDialerForStreaming(tunneling, dialer, func(err error) bool {
		return streamhttp.IsUpgradeFailure(err) || streamhttp.IsHTTPSProxyError(err)
	})
	ready := make(chan struct{})
	fw, err := portforward.NewOnAddressesForStreamingWithContext(ctx, dialer, []string{o.address},
		[]string{fmt.Sprintf("%d:%d", o.port, remote)}, ready, e.streams.ErrOut, e.streams.ErrOut)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- fw.ForwardPorts() }()
	select {
	case err := <-done:
		return fmt.Errorf("port-forward to %s/%s port %d: %w", a.Pod.Namespace, a.Pod.Name, remote, err)
	case <-ready:
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		return fmt.Errorf("port-forward: no local port: %v", err)
	}
	u := fmt.Sprintf("%s://%s/", scheme, hostPort(o.address, int(ports[0].Local)))
	fmt.Fprintf(e.streams.ErrOut, "%s: Pod %s, UI port %d; forwarding until interrupted\n", a.Name, a.Pod.Name, remote)
	fmt.Fprintln(out, u)
	if o.browser {
		if err := openBrowser(u); err != nil {
			fmt.Fprintf(e.streams.ErrOut, "cannot open a browser: %v\n", err)
		}
	}
	return <-done
}

// remotePort is the bound targetPort: the runtime writes a number; a name (a hand edit) is
// looked up in the Pod's containers as the API server's endpoints controller would.
func remotePort(a *uistate.App) (int, error) {
	tp := a.Service.Spec.Ports[0].TargetPort
	if tp.IntValue() > 0 {
		return tp.IntValue(), nil
	}
	for _, c := range append(append([]corev1.Container{}, a.Pod.Spec.InitContainers...), a.Pod.Spec.Containers...) {
		for _, p := range c.Ports {
			if p.Name == tp.StrVal {
				return int(p.ContainerPort), nil
			}
		}
	}
	return 0, fmt.Errorf("%s: targetPort %q names no port of Pod %s", a.Service.Name, tp.String(), a.Pod.Name)
}

func hostPort(addr string, port int) string {
	if addr == "0.0.0.0" || addr == "" {
		addr = "127.0.0.1"
	}
	if len(addr) > 0 && addr[0] != '[' && containsColon(addr) {
		addr = "[" + addr + "]"
	}
	return addr + ":" + strconv.Itoa(port)
}

func containsColon(s string) bool {
	for _, c := range s {
		if c == ':' {
			return true
		}
	}
	return false
}

// openBrowser hands url to the desktop's opener.
func openBrowser(url string) error {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	return exec.Command(name, url).Start()
}
