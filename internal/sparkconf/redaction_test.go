package sparkconf

import (
	"errors"
	"testing"
)

func TestRedaction(t *testing.T) {
	re, err := CompileRedaction(DefaultRedactionRegex)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key, value string
		want       bool
	}{
		{"spark.kubernetes.driver.pod.name", "token-sync-5b2d-driver", true},
		{"spark.kubernetes.driver.pod.name", "TOKEN-sync-driver", true},
		{"spark.kubernetes.namespace", "secrets-team", true},
		{"spark.kubernetes.namespace", "access-keys", false}, // access[.]?key: "access-key" has a '-'
		{"spark.kubernetes.namespace", "accesskey-x", true},
		{"spark.kubernetes.driver.pod.name", "wordcount-driver", false},
		{"spark.hadoop.fs.s3a.access.key", "wordcount", true}, // the key matches
	} {
		if got := Redacted(re, tc.key, tc.value); got != tc.want {
			t.Errorf("Redacted(%q, %q) = %t, want %t", tc.key, tc.value, got, tc.want)
		}
	}
	for _, expr := range []string{`(?i)(?=.*x)tok`, `(a)\1`, `a*+`, `(?>ab)`, `[a-z&&[^b]]`, `(?x) a b`, `end\Z`} {
		if _, err := CompileRedaction(expr); !errors.Is(err, ErrJavaOnlyRegex) {
			t.Errorf("CompileRedaction(%q) = %v, want ErrJavaOnlyRegex", expr, err)
		}
	}
	if _, err := CompileRedaction(`(?i)secret|(token`); err == nil || errors.Is(err, ErrJavaOnlyRegex) {
		t.Errorf("an unbalanced group must be a syntax error, got %v", err)
	}
	_, errs := Derive(map[string]string{KeyRedactionRegex: `(token`})
	if len(errs) != 1 || errs[0].Key != KeyRedactionRegex {
		t.Errorf("Derive: errors %v, want one for %s", errs, KeyRedactionRegex)
	}
	if _, errs := Derive(map[string]string{KeyRedactionRegex: `(?<=a)b`}); len(errs) != 0 {
		t.Errorf("a Java-only pattern is Spark-valid, not a SUI015 error: %v", errs)
	}
}
