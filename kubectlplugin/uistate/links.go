package uistate

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkui/sparkui/internal/names"
)

// links reads the Service's links. The route's host and prefix are the annotations the
// function wrote with the route (docs/routes.md); the scheme is known only for an Ingress
// (TLS listing the host: https, else http): a Gateway's listener or an OpenShift Route's
// termination decides it otherwise, so the URL is then given without one.
func links(ctx context.Context, cs kubernetes.Interface, svc *corev1.Service) Links {
	ann := svc.Annotations
	l := Links{External: ann[names.AnnotationResolvedExternalURI], History: ann[names.AnnotationHistoryURI]}
	prefix, ok := ann[names.AnnotationRoutePrefix]
	if !ok {
		return l
	}
	host := ann[names.AnnotationRouteHost]
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if host == "" {
		l.Route = "<any host>" + prefix
		return l
	}
	l.Route = "//" + host + prefix
	if scheme := ingressScheme(ctx, cs, svc, host); scheme != "" {
		l.Route = scheme + ":" + l.Route
	}
	return l
}

// ingressScheme is http or https for an Ingress in svc's namespace routing host to svc, ""
// when there is none (or Ingresses cannot be read).
func ingressScheme(ctx context.Context, cs kubernetes.Interface, svc *corev1.Service, host string) string {
	l, err := cs.NetworkingV1().Ingresses(svc.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	for _, ing := range l.Items {
		routes := false
		for _, r := range ing.Spec.Rules {
			if r.Host != host || r.HTTP == nil {
				continue
			}
			for _, p := range r.HTTP.Paths {
				routes = routes || (p.Backend.Service != nil && p.Backend.Service.Name == svc.Name)
			}
		}
		if !routes {
			continue
		}
		for _, t := range ing.Spec.TLS {
			for _, h := range t.Hosts {
				if h == host {
					return "https"
				}
			}
		}
		return "http"
	}
	return ""
}
