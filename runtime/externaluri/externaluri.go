// Package externaluri resolves the UI's external URI from the UI Service, for the modes where
// the runtime itself publishes it (service.externalURI nodePort or loadBalancer), and waits
// for the published URI (sparkui-runtime wait-uri).
//
// A resolver is one file: a type implementing Resolver and an init that registers its
// constructor under its mode's name. See docs/external-uri.md for the contract.
package externaluri

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/sparkui/sparkui/internal/names"
	"github.com/sparkui/sparkui/internal/sidecar"
)

// Service is the part of a core/v1 Service the runtime reads (decoded from the API server's
// JSON: the runtime registers no API types, which keeps its binary small).
type Service struct {
	Metadata struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		ResourceVersion string            `json:"resourceVersion"`
		Labels          map[string]string `json:"labels"`
		Annotations     map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Type     string            `json:"type"`
		Selector map[string]string `json:"selector"`
		Ports    []Port            `json:"ports"`
	} `json:"spec"`
	Status struct {
		LoadBalancer struct {
			Ingress []Ingress `json:"ingress"`
		} `json:"loadBalancer"`
	} `json:"status"`
}

// Port is one of the Service's ports.
type Port struct {
	Name     string `json:"name"`
	Port     int32  `json:"port"`
	NodePort int32  `json:"nodePort"`
}

// Ingress is one load-balancer ingress point.
type Ingress struct {
	IP       string `json:"ip"`
	Hostname string `json:"hostname"`
}

// Parse decodes a Service from the API server's JSON.
func Parse(raw []byte) (*Service, error) {
	var s Service
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("reading the Service's JSON: %w", err)
	}
	return &s, nil
}

// URI is the published URI ("" when none).
func (s *Service) URI() string { return s.Metadata.Annotations[names.AnnotationResolvedExternalURI] }

// Bound reports whether the Service routes to the application's UI: it has a selector with
// neither the withdrawal key nor the History Server redirector's (docs/external-uri.md).
func (s *Service) Bound() bool {
	_, withdrawn := s.Spec.Selector[names.WithdrawnSelectorKey]
	return len(s.Spec.Selector) > 0 && !withdrawn && !s.HandedOff()
}

// HandedOff reports whether the runtime handed the Service off to the History Server
// redirector (its selector selects the redirector's Pods): withdrawn for every other purpose.
func (s *Service) HandedOff() bool {
	_, ok := s.Spec.Selector[names.LabelHistoryRedirector]
	return ok
}

// HistoryURI is the application's History Server page the hand-off published, "" unless the
// Service is handed off (a later bind leaves a stale annotation behind: it counts only while
// the selector is the redirector's).
func (s *Service) HistoryURI() string {
	if !s.HandedOff() {
		return ""
	}
	return s.Metadata.Annotations[names.AnnotationHistoryURI]
}

// Waiting is what the status annotations say while a runtime waits to bind
// (docs/service-status.md): "" unless ui-state is waiting. They are the application's claims
// about itself, read for its own Service only.
func (s *Service) Waiting() string {
	a := s.Metadata.Annotations
	if a[names.AnnotationUIState] != names.UIStateWaiting {
		return ""
	}
	w := "waiting since " + a[names.AnnotationUISince]
	if p := a[names.AnnotationUIPod]; p != "" {
		w += " (driver Pod " + p + ")"
	}
	if r := a[names.AnnotationUIReason]; r != "" {
		w += ": " + r
	}
	return w
}

// Withdrawn reports whether the runtime withdrew the Service.
func (s *Service) Withdrawn() bool {
	_, withdrawn := s.Spec.Selector[names.WithdrawnSelectorKey]
	return withdrawn
}

// Resolver turns the UI Service, as last read, into the UI's external URI.
type Resolver interface {
	// Resolve returns the URI of svc's first port (the UI port). done is false when the
	// route is not there yet (a load balancer not provisioned): read the Service again
	// later. An error is a problem no retry will fix (a missing node address, a Service of
	// the wrong type).
	Resolve(ctx context.Context, svc *Service, tls bool) (uri string, done bool, err error)
	// Polls reports whether the Service must be read again (GET) until Resolve is done.
	Polls() bool
}

// Env is what a resolver may learn from the runtime's environment.
type Env struct {
	Getenv func(string) string
}

var registry = map[string]func(Env) (Resolver, error){}

// register adds a resolver for mode; called from each resolver's file.
func register(mode string, newResolver func(Env) (Resolver, error)) { registry[mode] = newResolver }

// Modes lists the modes with a resolver.
func Modes() []string {
	var out []string
	for m := range registry {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// New returns the resolver for mode, or nil when the runtime does not resolve the URI in
// that mode ("", none, annotation).
func New(mode string, env Env) (Resolver, error) {
	switch mode {
	case "", string(sidecar.ExternalURINone), string(sidecar.ExternalURIAnnotation):
		return nil, nil
	}
	f, ok := registry[mode]
	if !ok {
		return nil, fmt.Errorf("--external-uri=%q: want one of %s (or annotation/none)", mode, strings.Join(Modes(), ", "))
	}
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	return f(env)
}

// Format builds scheme://host[:port]: https with tls, IPv6 addresses in brackets, the port
// left out when it is the scheme's default.
func Format(host string, port int32, tls bool) string {
	scheme, def := "http", int32(80)
	if tls {
		scheme, def = "https", 443
	}
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	}
	u := url.URL{Scheme: scheme, Host: host}
	if port != def && port > 0 {
		u.Host = net.JoinHostPort(host, strconv.Itoa(int(port)))
	} else if strings.Contains(host, ":") {
		u.Host = "[" + host + "]"
	}
	return u.String()
}
