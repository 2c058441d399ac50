package externaluri

import (
	"context"
	"fmt"
	"net"

	"github.com/sparkui/sparkui/internal/sidecar"
)

func init() { register(string(sidecar.ExternalURINodePort), newNodePort) }

// nodePort: the node's address (downward API status.hostIP, $HOST_IP) and the UI port's
// allocated nodePort. Known from the bind response: no read.
type nodePort struct{ host string }

func newNodePort(env Env) (Resolver, error) {
	host := env.Getenv(sidecar.EnvHostIP)
	if host == "" {
		return nil, fmt.Errorf("--external-uri=nodePort needs $%s (downward API status.hostIP)", sidecar.EnvHostIP)
	}
	if net.ParseIP(host) == nil {
		return nil, fmt.Errorf("$%s=%q is not an IP address", sidecar.EnvHostIP, host)
	}
	return nodePort{host: host}, nil
}

func (nodePort) Polls() bool { return false }

func (r nodePort) Resolve(_ context.Context, svc *Service, tls bool) (string, bool, error) {
	if len(svc.Spec.Ports) == 0 {
		return "", false, fmt.Errorf("the Service has no port")
	}
	p := svc.Spec.Ports[0].NodePort
	if p == 0 {
		return "", false, fmt.Errorf("the Service's port %q has no nodePort (type %s; want NodePort or LoadBalancer)", svc.Spec.Ports[0].Name, svc.Spec.Type)
	}
	return Format(r.host, p, tls), true, nil
}
