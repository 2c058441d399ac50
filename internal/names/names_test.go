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

// TestLabelValue: a name that is a valid label value is kept; any other (longer than 63,
// characters a label value refuses) becomes a deterministic, distinct valid one, checked with
// the API server's own validation.
func TestLabelValue(t *testing.T) {
	for _, ok := range []string{"pi", "a.b_c-d", strings.Repeat("a", 63), ""} {
		if got := LabelValue(ok); got != ok {
			t.Errorf("LabelValue(%q) = %q, want it unchanged", ok, got)
		}
	}
	long := strings.Repeat("quarterly-revenue-", 8) + "x"
	seen := map[string]string{}
	for _, in := range []string{
		long, long + "y", strings.Repeat("a", 64), strings.Repeat("b.", 126) + "b", "-starts-with-dash",
		"ends.with.dot.", "has spaces/and:colons", strings.Repeat("z", 62) + "-" + "tail",
	} {
		got := LabelValue(in)
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 || got == "" {
			t.Errorf("LabelValue(%q) = %q: %v", in, got, errs)
		}
		if LabelValue(in) != got {
			t.Errorf("LabelValue(%q) not deterministic", in)
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("LabelValue(%q) = LabelValue(%q) = %q", in, prev, got)
		}
		seen[got] = in
	}
	if got := LabelValue(long); !strings.HasPrefix(got, "quarterly-revenue-quarterly-revenue-") || len(got) > 63 {
		t.Errorf("LabelValue(long) = %q (%d): want the name's head kept, at most 63 characters", got, len(got))
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
