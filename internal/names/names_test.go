package names

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestPrefix(t *testing.T) {
	for _, tc := range []struct{ svc, pod, want string }{
		{"wordcount-5b2d-driver-svc", "wordcount-5b2d-driver", "wordcount-5b2d"},
		{"spark-feedface-driver-svc", "a-very-long-name-7f3e-driver", "spark-feedface"},
		{"", "wordcount-5b2d-driver", "wordcount-5b2d"},
		{"custom", "notebook-0", "notebook-0"},
	} {
		if got := Prefix(tc.svc, tc.pod); got != tc.want {
			t.Errorf("Prefix(%q, %q) = %q, want %q", tc.svc, tc.pod, got, tc.want)
		}
	}
}

func TestFit(t *testing.T) {
	if got := Fit("wordcount-5b2d", UISvcSuffix, nil); got != "wordcount-5b2d-ui-svc" {
		t.Errorf("short name changed: %q", got)
	}
	long := strings.Repeat("quarterly-revenue-", 5)
	a, b := Fit(long, UISvcSuffix, nil), Fit(long, UISvcSuffix, nil)
	if a != b {
		t.Errorf("not deterministic: %q vs %q", a, b)
	}
	if errs := validation.IsDNS1035Label(a); len(errs) > 0 || !strings.HasSuffix(a, UISvcSuffix) {
		t.Errorf("%q: %v", a, errs)
	}
	if Fit(long+"x", UISvcSuffix, nil) == a {
		t.Errorf("different prefixes must not share a shortened name")
	}
	taken := map[string]bool{"wordcount-5b2d-ui-svc": true}
	c := Fit("wordcount-5b2d", UISvcSuffix, func(n string) bool { return taken[n] })
	if c == "wordcount-5b2d-ui-svc" || len(validation.IsDNS1035Label(c)) > 0 {
		t.Errorf("collision not avoided: %q", c)
	}
	taken[c] = true
	d := Fit("wordcount-5b2d", UISvcSuffix, func(n string) bool { return taken[n] })
	if taken[d] || len(validation.IsDNS1035Label(d)) > 0 {
		t.Errorf("second collision not avoided: %q", d)
	}
	for _, odd := range []string{"0-starts-with-digit", "UPPER.case_name", "---", ""} {
		if n := Fit(odd, UISvcSuffix, nil); len(validation.IsDNS1035Label(n)) > 0 {
			t.Errorf("Fit(%q) = %q: invalid", odd, n)
		}
	}
}

// TestKubeflowUIService: the kubeflow operator's names, as its own test
// (pkg/util/sparkapplication_test.go GetDefaultUIServiceName) has them; the long one worked
// out by hand from generateName (MD5 of "<app>-ui-svc", first 8 hex digits).
func TestKubeflowUIService(t *testing.T) {
	for app, want := range map[string]string{
		"test-app": "test-app-ui-svc",
		"test-app-with-a-long-name-that-would-be-over-63-characters": "test-app-with-a-long-name-that-would-be-over-63-26cd35c6-ui-svc",
	} {
		if got := KubeflowUIService(app); got != want || len(got) > 63 {
			t.Errorf("KubeflowUIService(%q) = %q, want %q", app, got, want)
		}
	}
}
