package app

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/sparkui/sparkui/internal/sidecar"
	"github.com/sparkui/sparkui/internal/yamlx"
)

// What the API server rejects and what an application's runtime must be told: transform
// writes it, validate checks the input against it, so both read it from here.

// ZeroContainerPort reports whether a containerPort entry is one the API server rejects for
// being 0 (spark.ui.port=0 writes exactly that) or missing.
func ZeroContainerPort(p *yaml.Node) bool {
	n, ok := yamlx.Int(yamlx.Get(p, "containerPort"))
	return !ok || n == 0
}

// ZeroServicePort reports whether a Service port entry has port 0 (or none).
func ZeroServicePort(p *yaml.Node) bool {
	n, ok := yamlx.Int(yamlx.Get(p, "port"))
	return !ok || n == 0
}

// ZeroTargetPort reports whether a Service port entry has an explicit targetPort 0.
func ZeroTargetPort(p *yaml.Node) bool {
	t := yamlx.Get(p, "targetPort")
	if t == nil {
		return false
	}
	n, ok := yamlx.Int(t)
	return ok && n == 0
}

// RuntimeConfig is what the runtime must be told about a; externalURI is the functionConfig's
// service.externalURI.
func (a *App) RuntimeConfig(externalURI sidecar.ExternalURIMode) sidecar.Config {
	uri := ""
	if sidecar.ResolvesURI(externalURI) {
		uri = string(externalURI)
	}
	role := a.BinderName
	if role == sidecar.DefaultRole(a.UIServiceName) {
		role = "" // the runtime's default
	}
	return sidecar.Config{
		Role:        role,
		ExternalURI: uri,
		Service:     a.UIServiceName,
		AppID:       a.AppID,
		UIPort:      a.Settings.UIPort,
		MaxRetries:  a.Settings.MaxRetries,
		TLS:         a.Settings.TLS,
		SSLPort:     a.Settings.SSLPort,
		HostNetwork: a.HostNetwork,
	}
}

// IsOurPreStop reports whether a preStop handler runs the runtime's withdraw command.
func IsOurPreStop(h *yaml.Node) bool {
	var cmd []string
	for _, c := range yamlx.Items(yamlx.Get(h, "exec", "command")) {
		cmd = append(cmd, yamlx.Str(c))
	}
	return sidecar.IsWithdrawCommand(cmd)
}
