package sidecar

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ParsePorts reads a SkipPorts list: comma-separated ports in 1-65535, blanks ignored.
func ParsePorts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := strconv.Atoi(f)
		if err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("port %q is not in 1-65535", f)
		}
		out = append(out, p)
	}
	return out, nil
}

// FormatPorts writes ports as a SkipPorts list.
func FormatPorts(ports []int) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ",")
}

// ParseLabel reads a GuardLabel, KEY=VALUE: a valid label key and a non-empty, valid label
// value (an empty one would test for a label with no value, which no sparkui Service has),
// with no unexpanded $(VAR) reference.
func ParseLabel(s string) (key, value string, err error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("%q is not KEY=VALUE", s)
	}
	if err := checkTerm(k, v); err != nil {
		return "", "", err
	}
	return k, v, nil
}

// ParseSelector reads a PodSelector, "k=v[,k=v]" (blanks around keys and values ignored). It
// refuses, so that the runtime never binds a selector that could select the wrong Pods or
// none:
//   - "$(" anywhere: a $(VAR) reference the kubelet left verbatim because VAR is not defined
//     in the container's env (Kubernetes expands $(VAR) in args only for defined variables);
//   - an empty key or value: a downward-API variable that is defined but empty (the Pod lacks
//     the label it reads). A term k= would select Pods whose label k is empty, e.g. other runs
//     in the same situation; sparkui never means that;
//   - keys and values that are not valid label keys and values (the API server would refuse
//     the bind with a 422 at every attempt);
//   - a key given twice with different values;
//   - an empty selector (it would select nothing; the default is given by leaving it unset).
func ParseSelector(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty selector")
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not key=value", kv)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if err := checkTerm(k, v); err != nil {
			return nil, err
		}
		if old, dup := out[k]; dup && old != v {
			return nil, fmt.Errorf("key %q given twice (%q and %q)", k, old, v)
		}
		out[k] = v
	}
	return out, nil
}

func checkTerm(k, v string) error {
	if i := strings.Index(k+"="+v, "$("); i >= 0 {
		ref := (k + "=" + v)[i:]
		if j := strings.IndexByte(ref, ')'); j >= 0 {
			ref = ref[:j+1]
		}
		return fmt.Errorf("%s=%s holds the unexpanded reference %s: the variable is not defined in the container's env (the kubelet leaves $(VAR) as is then)", k, v, ref)
	}
	if k == "" || v == "" {
		return fmt.Errorf("%s=%s has an empty key or value (a downward-API variable that is empty: the Pod lacks the label it reads)", k, v)
	}
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		return fmt.Errorf("key %q: %s", k, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		return fmt.Errorf("value %q of %s: %s", v, k, strings.Join(errs, "; "))
	}
	return nil
}
