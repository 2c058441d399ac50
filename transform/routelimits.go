package transform

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Limits the route objects' own APIs enforce on what sparkui writes into them. A value past
// one is refused when applied (or, where the schema lets it through, never routes), so they
// are checked at build time: on the functionConfig's templates (SUI014, when every expansion
// would break them) and on each application's expansion (SUI053, that application only).
const (
	// MaxHTTPRoutePath is HTTPPathMatch.Value's maxLength, the PathPrefix the HTTPRoute
	// matches (sigs.k8s.io/gateway-api apis/v1/httproute_types.go, v1.6.3).
	MaxHTTPRoutePath = 1024
	// MaxHTTPRouteHeaderValue is HTTPHeader.Value's maxLength, the X-Forwarded-Context value of
	// the RequestHeaderModifier filter (same file).
	MaxHTTPRouteHeaderValue = 4096
	// MaxOpenShiftHeaderValue is the maxLength of a Route's spec.httpHeaders set value
	// (openshift/api route/v1 RouteSetHTTPHeader.Value; testdata/assets/crds-openshift).
	MaxOpenShiftHeaderValue = 16384
	// MaxParentRefs is CommonRouteSpec.ParentRefs's maxItems (gateway-api apis/v1/shared_types.go).
	MaxParentRefs = 32
)

// RouteProblem is one route value an API would refuse: the spec.route field it comes from
// (hostname, grpcHostname, pathPrefix) and what is wrong.
type RouteProblem struct{ Field, Msg string }

// CheckHost says what is wrong with a route's host, "" when nothing:
//   - an IP address. The Gateway API's Hostname "matches the RFC 1123 definition of a
//     hostname with 2 notable exceptions: 1. IPs are not allowed" (apis/v1/shared_types.go;
//     its CRD pattern does not enforce it, so the route would be accepted and never match as
//     meant); the API server refuses an Ingress host that parses as an IP, "must be a DNS
//     name, not an IP address" (k8s.io/kubernetes pkg/apis/networking/validation,
//     validateIngressRules, with netutils.ParseIPSloppy: the same parse as
//     IsValidIPForLegacyField without strict validation, used here);
//   - not a DNS-1123 subdomain (every kind's schema or validation);
//   - a label over 63 characters: no DNS name can hold it (RFC 1035 section 2.3.4), and the
//     OpenShift Route's host pattern refuses it, while the Gateway API's pattern and the
//     Ingress validation (IsDNS1123Subdomain, which bounds only the whole name) let it through.
func CheckHost(h string) string {
	if len(validation.IsValidIPForLegacyField(nil, h, false, nil)) == 0 {
		return "is an IP address: a route's host must be a DNS name (Gateway API: \"IPs are not allowed\"; the API server refuses an Ingress host that is an IP)"
	}
	if errs := validation.IsDNS1123Subdomain(h); len(errs) > 0 {
		return "is not a DNS name (DNS-1123 subdomain): " + strings.Join(errs, "; ")
	}
	for _, label := range strings.Split(h, ".") {
		if errs := validation.IsDNS1123Label(label); len(errs) > 0 {
			return fmt.Sprintf("has a DNS label of %d characters: %s (RFC 1035: no DNS name holds a longer label)", len(label), strings.Join(errs, "; "))
		}
	}
	return ""
}

// checkRouteValues checks the expanded (or sampled) values of a route of kind against what
// its API accepts: the hosts (CheckHost) and the lengths of the prefix where the kind writes
// it (the HTTPRoute's path match and header, the OpenShift Route's header). CheckPathPrefix
// has checked the prefix's form.
func checkRouteValues(kind RouteKind, host, grpcHost, prefix string) []RouteProblem {
	var out []RouteProblem
	for _, h := range []struct{ field, v string }{{"hostname", host}, {"grpcHostname", grpcHost}} {
		if h.v == "" {
			continue
		}
		if msg := CheckHost(h.v); msg != "" {
			out = append(out, RouteProblem{h.field, msg})
		}
	}
	if prefix == "/" {
		return out // no filter, no header
	}
	switch kind {
	case RouteHTTPRoute:
		// The prefix is written twice, each under its own bound: the path bound is the
		// smaller, but each is checked on what is written.
		if len(prefix) > MaxHTTPRoutePath {
			out = append(out, RouteProblem{"pathPrefix", fmt.Sprintf("is %d characters long: an HTTPRoute path match value has at most %d (Gateway API HTTPPathMatch.Value)", len(prefix), MaxHTTPRoutePath)})
		}
		if len(prefix) > MaxHTTPRouteHeaderValue {
			out = append(out, RouteProblem{"pathPrefix", fmt.Sprintf("is %d characters long: the X-Forwarded-Context header value the HTTPRoute sets has at most %d (Gateway API HTTPHeader.Value)", len(prefix), MaxHTTPRouteHeaderValue)})
		}
	case RouteOpenShift:
		if len(prefix) > MaxOpenShiftHeaderValue {
			out = append(out, RouteProblem{"pathPrefix", fmt.Sprintf("is %d characters long: the X-Forwarded-Context header value the Route sets (spec.httpHeaders) has at most %d", len(prefix), MaxOpenShiftHeaderValue)})
		}
	}
	return out
}

// CheckRouteTemplates checks the route templates of o as every application would expand
// them at the least: each placeholder one character long. A problem there is one of every
// application (SUI014); a template with a syntax error is left to the syntax checks.
func CheckRouteTemplates(o RouteOptions) []RouteProblem {
	var vals [3]string
	for i, tpl := range []string{o.Hostname, o.GRPCHostname, o.PathPrefix} {
		x, msg := TemplateSample(tpl)
		if msg != "" {
			continue
		}
		vals[i] = x
	}
	var out []RouteProblem
	for _, p := range checkRouteValues(o.Kind, vals[0], vals[1], vals[2]) {
		tpl := map[string]string{"hostname": o.Hostname, "grpcHostname": o.GRPCHostname, "pathPrefix": o.PathPrefix}[p.Field]
		if strings.Contains(tpl, "{") {
			p.Msg = "expands, even with one-character {namespace} and {name}, to a value that " + p.Msg
		}
		out = append(out, p)
	}
	return out
}
