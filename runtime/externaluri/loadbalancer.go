package externaluri

import (
	"context"
	"fmt"

	"github.com/sparkui/sparkui/internal/sidecar"
)

func init() {
	register(string(sidecar.ExternalURILoadBalancer), func(Env) (Resolver, error) { return loadBalancer{}, nil })
}

// loadBalancer: the first load-balancer ingress (IP, else hostname) and the UI port. The
// ingress appears in the Service's status some time after binding: the runtime reads the
// Service again (GET, capped exponential backoff with jitter) until it does.
type loadBalancer struct{}

func (loadBalancer) Polls() bool { return true }

func (loadBalancer) Resolve(_ context.Context, svc *Service, tls bool) (string, bool, error) {
	if svc.Spec.Type != "" && svc.Spec.Type != "LoadBalancer" {
		return "", false, fmt.Errorf("the Service is of type %s, want LoadBalancer", svc.Spec.Type)
	}
	if len(svc.Spec.Ports) == 0 {
		return "", false, fmt.Errorf("the Service has no port")
	}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		host := in.IP
		if host == "" {
			host = in.Hostname
		}
		if host != "" {
			return Format(host, svc.Spec.Ports[0].Port, tls), true, nil
		}
	}
	return "", false, nil
}
