package fieldpath

import (
	"reflect"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		path string
		segs []Segment
	}{
		{"spec.containers[0].ports[2].containerPort", []Segment{{"spec", -1}, {"containers", -1}, {"", 0}, {"ports", -1}, {"", 2}, {"containerPort", -1}}},
		{`data["spark.properties"]`, []Segment{{"data", -1}, {"spark.properties", -1}}},
		{`spec.sparkConf["spark.ui.port"]`, []Segment{{"spec", -1}, {"sparkConf", -1}, {"spark.ui.port", -1}}},
		{`data["a]b"]`, []Segment{{"data", -1}, {"a]b", -1}}},
		{`data["say \"hi\""]`, []Segment{{"data", -1}, {`say "hi"`, -1}}},
		{"[3].name", []Segment{{"", 3}, {"name", -1}}},
		{"kind", []Segment{{"kind", -1}}},
		{"", nil},
	} {
		if got := Parse(tc.path); !reflect.DeepEqual(got, tc.segs) {
			t.Errorf("Parse(%q) = %#v, want %#v", tc.path, got, tc.segs)
		}
		if got := Format(tc.segs); got != tc.path {
			t.Errorf("Format(%#v) = %q, want %q", tc.segs, got, tc.path)
		}
	}
}

// TestParseMalformed: a path no formatter writes still yields its readable prefix.
func TestParseMalformed(t *testing.T) {
	for path, want := range map[string][]Segment{
		"spec.ports[":     {{"spec", -1}, {"ports", -1}, {"[", -1}},
		"spec.ports[x]":   {{"spec", -1}, {"ports", -1}, {"x", -1}},
		"spec.ports[-1]":  {{"spec", -1}, {"ports", -1}, {"-1", -1}},
		`data["unclosed]`: {{"data", -1}, {`["unclosed]`, -1}},
		"a..b":            {{"a", -1}, {"b", -1}},
	} {
		if got := Parse(path); !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%q) = %#v, want %#v", path, got, want)
		}
	}
}

func TestKeyAndIndex(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Key("data", "mode"), "data.mode"},
		{Key("data", "spark.properties"), `data["spark.properties"]`},
		{Key("", "spec"), "spec"},
		{Key("", "a.b"), `["a.b"]`},
		{Index("spec.ports", 2), "spec.ports[2]"},
		{FromJSONPointer("/spec/service/port"), "spec.service.port"},
		{FromJSONPointer("/spec/sparkConf/spark.ui.port"), `spec.sparkConf["spark.ui.port"]`},
		{FromJSONPointer("/spec/items/0/a~1b~0c"), "spec.items[0].a/b~c"},
		{FromJSONPointer(""), ""},
		{FromJSONPointer("/"), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
