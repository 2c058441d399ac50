package sidecar

import (
	"reflect"
	"strings"
	"testing"
)

func TestCheckHistoryURL(t *testing.T) {
	for _, ok := range []string{"https://spark-history.example.com", "http://shs:18080", "https://h.example.com/spark/", "http://[fd00::1]:18080"} {
		if err := CheckHistoryURL(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"":                                 "not an absolute http",
		"spark-history:18080":              "not an absolute http",
		"/history":                         "not an absolute http",
		"ftp://h.example.com":              "not an absolute http",
		"https://":                         "no host",
		"https://u:p@h.example.com":        "credentials",
		"https://h.example.com/?a=b":       "query",
		"https://h.example.com/?":          "query",
		"https://h.example.com/#top":       "fragment",
		"https://h.example.com/#":          "fragment",
		"https://h.example.com/%zz":        "not a URL",
		"https://h.example.com:99999999/x": "port 99999999",
	} {
		err := CheckHistoryURL(bad)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", bad, err, want)
		}
	}
}

func TestHistoryURI(t *testing.T) {
	for _, c := range [][3]string{
		{"https://h.example.com", "spark-0123", "https://h.example.com/history/spark-0123/"},
		{"https://h.example.com/spark/", "spark-0123", "https://h.example.com/spark/history/spark-0123/"},
		{"http://shs:18080", "app/with space?", "http://shs:18080/history/app%2Fwith%20space%3F/"},
	} {
		if got := HistoryURI(c[0], c[1]); got != c[2] {
			t.Errorf("HistoryURI(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

func TestHistoryEnv(t *testing.T) {
	if env := (History{}).Env(); env != nil {
		t.Errorf("no URL: env %v", env)
	}
	want := [][2]string{{"SPARKUI_HISTORY_URL", "https://h.example.com"}, {"SPARKUI_REDIRECTOR_PORT", "8081"}}
	if env := (History{URL: "https://h.example.com", RedirectorPort: 8081}).Env(); !reflect.DeepEqual(env, want) {
		t.Errorf("env %v, want %v", env, want)
	}
	for _, p := range []int{0, -1, 65536} {
		if CheckRedirectorPort(p) == nil {
			t.Errorf("port %d accepted", p)
		}
	}
	if err := CheckRedirectorPort(8080); err != nil {
		t.Error(err)
	}
}
