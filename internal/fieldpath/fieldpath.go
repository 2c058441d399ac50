// Package fieldpath is the one spelling of a field path in results: the KRM spec's dotted form
// (spec.containers[0].ports[2].containerPort), with keys that hold dots or brackets quoted
// (data["spark.properties"]) so a path can always be split back into its parts.
package fieldpath

import (
	"strconv"
	"strings"
)

// Segment is one step of a path: a mapping key, or a sequence index when Index >= 0.
type Segment struct {
	Key   string
	Index int
}

// needsQuotes: a key holding any of these would split differently when parsed back.
func needsQuotes(key string) bool { return strings.ContainsAny(key, `.[]"`) }

// Key appends a mapping key to parent ("" for the object's root).
func Key(parent, key string) string {
	if needsQuotes(key) {
		return parent + "[" + strconv.Quote(key) + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// Index appends a sequence index to parent.
func Index(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

// Format is the inverse of Parse.
func Format(segs []Segment) string {
	var p string
	for _, s := range segs {
		if s.Index >= 0 {
			p = Index(p, s.Index)
		} else {
			p = Key(p, s.Key)
		}
	}
	return p
}

// FromJSONPointer turns a JSON pointer (what JSON Schema validators report) into a path. A
// numeric token is an index: the schemas this is used with have no numeric property names.
func FromJSONPointer(ptr string) string {
	ptr = strings.TrimPrefix(ptr, "/")
	if ptr == "" {
		return ""
	}
	var segs []Segment
	for _, tok := range strings.Split(ptr, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if n, err := strconv.Atoi(tok); err == nil && n >= 0 {
			segs = append(segs, Segment{Index: n})
			continue
		}
		segs = append(segs, Segment{Key: tok, Index: -1})
	}
	return Format(segs)
}

// Parse splits a path. It never fails: what does not read as an index or a quoted key is
// taken as a key, so a malformed path still locates its longest sensible prefix.
func Parse(p string) []Segment {
	var out []Segment
	var key strings.Builder
	flush := func() {
		if key.Len() > 0 {
			out = append(out, Segment{Key: key.String(), Index: -1})
			key.Reset()
		}
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '.':
			flush()
		case '[':
			flush()
			end := closing(p[i:])
			if end < 0 {
				key.WriteString(p[i:])
				i = len(p)
				continue
			}
			inner := p[i+1 : i+end]
			if q, err := strconv.Unquote(inner); err == nil && strings.HasPrefix(inner, `"`) {
				out = append(out, Segment{Key: q, Index: -1})
			} else if n, err := strconv.Atoi(inner); err == nil && n >= 0 {
				out = append(out, Segment{Index: n})
			} else {
				out = append(out, Segment{Key: inner, Index: -1})
			}
			i += end
		default:
			key.WriteByte(c)
		}
	}
	flush()
	return out
}

// closing is the offset of the "]" that ends the bracket s starts with, skipping a quoted key
// (which may itself hold "]").
func closing(s string) int {
	if len(s) > 1 && s[1] == '"' {
		for i := 2; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '"':
				if i+1 < len(s) && s[i+1] == ']' {
					return i + 1
				}
				return -1
			}
		}
		return -1
	}
	return strings.IndexByte(s, ']')
}
