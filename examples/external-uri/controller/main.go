// Command uri-controller is the reference implementation of sparkui's external-URI
// annotation contract (docs/external-uri.md) for clusters that route to the UI through an
// Ingress: for every Service marked sparkui.dev/provide-external-uri=true it finds the Ingress
// rule whose backend is that Service and writes sparkui.dev/resolved-external-uri while the
// Service is bound; it removes it when the Service is withdrawn or no Ingress routes to it.
package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	namespace := flag.String("namespace", "", "namespace to watch (all when empty)")
	resync := flag.Duration("resync", 30*time.Second, "full resync period")
	flag.Parse()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	if err != nil {
		slog.Error("kubernetes client config", "err", err)
		os.Exit(1)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		slog.Error("kubernetes client", "err", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, cs, *namespace, *resync); err != nil {
		slog.Error("controller stopped", "err", err)
		os.Exit(1)
	}
}
