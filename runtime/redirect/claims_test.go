package redirect

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// linearByHost and linearOverlaps are the rule of ByHost's route claims and of Overlaps as
// first written, one claim against the request or every other claim; the indexed table must
// answer exactly as they do (TestClaimIndexAgrees).
func linearByHost(es []Entry, host, path, forwardedContext string) (names []string) {
	host = strings.TrimSuffix(strings.ToLower(hostOnly(host)), ".")
	fwd := trimSlash(forwardedContext)
	for _, e := range es {
		if e.Refused != "" || e.Host != "" && e.Host != host {
			continue
		}
		if !(forwardedContext != "" && fwd == e.Prefix) && !segmentPrefix(e.Prefix, path) {
			continue
		}
		names = append(names, e.Name)
	}
	return names
}

func linearOverlaps(es []Entry) (out []string) {
	for i, a := range es {
		if a.Refused != "" {
			continue
		}
		for _, b := range es[i+1:] {
			if b.Refused != "" || a.Host != "" && b.Host != "" && a.Host != b.Host {
				continue
			}
			if segmentPrefix(a.Prefix, b.Prefix) || segmentPrefix(b.Prefix, a.Prefix) {
				out = append(out, a.Name+" and "+b.Name)
			}
		}
	}
	return out
}

// segmentPrefix: prefix (no trailing slash; "" the root) is path itself or a whole-segment
// prefix of it: /a/b matches /a/b, /a/b/ and /a/b/c, not /a/bc.
func segmentPrefix(prefix, path string) bool {
	if prefix == "" {
		return true
	}
	rest, ok := strings.CutPrefix(path, prefix)
	return ok && (rest == "" || rest[0] == '/')
}

// TestClaimIndexAgrees: on random tables (few hosts, any host, nested and equal prefixes,
// refused entries) and random requests, the index finds exactly the claims the linear rule
// finds, and lists the same overlaps (all of them when there are at most maxOverlaps).
func TestClaimIndexAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 1))
	hosts := []string{"", "", "spark.example.com", "other.example.com"}
	prefixes := []string{"", "/a", "/a/b", "/a/bc", "/a/b/c", "/b", "a", "//x", "/a/b/c/d"}
	paths := []string{"/", "", "/a", "/a/", "/a/b", "/a/bc/x", "/a/b/c/d/e", "/b/x", "a/b", "//x/y", "/c", "*"}
	for round := range 2000 {
		var es []Entry
		for i := range 1 + rng.IntN(8) {
			e := Entry{Name: fmt.Sprintf("s%d", i), Host: hosts[rng.IntN(len(hosts))], Prefix: prefixes[rng.IntN(len(prefixes))], AppID: "x"}
			if rng.IntN(6) == 0 {
				e.Refused = "refused"
			}
			es = append(es, e)
		}
		tb := NewTable("analytics", es)
		for range 20 {
			host := []string{"spark.example.com", "Other.Example.com:443", "elsewhere", ""}[rng.IntN(4)]
			path := paths[rng.IntN(len(paths))]
			fwd := []string{"", "", "/", "/a/b/", "/b", "/a/b/c"}[rng.IntN(6)]
			want := linearByHost(tb.entries, host, path, fwd)
			r, ok := tb.ByHost(host, path, fwd)
			var got []string
			switch {
			case ok:
				got = []string{r.Entry.Name}
			case len(r.Ambiguous) > 0:
				got = r.Ambiguous
				if r.AmbiguousMore != 0 {
					t.Fatalf("round %d: %d more than named", round, r.AmbiguousMore)
				}
			}
			if !reflect.DeepEqual(got, want) && !(len(want) == 0 && got == nil) {
				t.Fatalf("round %d: %+v\nrequest %q %q fwd %q: got %v, want %v", round, tb.entries, host, path, fwd, got, want)
			}
		}
		want := linearOverlaps(tb.entries)
		got := tb.Overlaps()
		if len(want) <= maxOverlaps {
			if !reflect.DeepEqual(got, want) && !(len(want) == 0 && got == nil) {
				t.Fatalf("round %d: %+v\noverlaps %q, want %q", round, tb.entries, got, want)
			}
			continue
		}
		if len(got) != maxOverlaps+1 || !strings.HasPrefix(got[maxOverlaps], "more") {
			t.Fatalf("round %d: %d overlaps, want %d named and more: %q", round, len(want), maxOverlaps, got)
		}
		for _, p := range got[:maxOverlaps] {
			if !contains(want, p) {
				t.Fatalf("round %d: %q is not an overlap (%q)", round, p, want)
			}
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestOverlapsAtScale: 10,000 handed-off Services without routes (each claims every
// header-less request) overlap in 50 million pairs; the report names ten and says there are
// more, and one without a claim of its own still redirects by its header and DNS name.
func TestOverlapsAtScale(t *testing.T) {
	tb := NewTable("analytics", scaleEntries(t, scaleN, unrouted))
	got := tb.Overlaps()
	if len(got) != maxOverlaps+1 || got[0] != scaleName(0)+" and "+scaleName(1) || !strings.HasPrefix(got[maxOverlaps], "more") {
		t.Errorf("overlaps %q", got)
	}
	if r, ok := tb.ByHost(scaleName(4242)+".analytics.svc", "/jobs/", ""); !ok || r.Entry.AppID != scaleAppID(4242) {
		t.Errorf("by DNS name: %+v %v", r, ok)
	}
	if r, ok := tb.ByHost("spark.example.com", "/jobs/", ""); ok || len(r.Ambiguous) != maxAmbiguous || r.AmbiguousMore != scaleN-maxAmbiguous || r.Ambiguous[0] != scaleName(0) {
		t.Errorf("header-less request: ok %v, ambiguous %q and %d more, want %d named and %d more", ok, r.Ambiguous, r.AmbiguousMore, maxAmbiguous, scaleN-maxAmbiguous)
	}
	resp := do(t, Handler{HistoryURL: shs, Source: fakeStore{tb}}, "spark.example.com", "/jobs/", nil)
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != 404 || len(body) > 1024 || !bytes.HasSuffix(body, []byte(scaleName(9)+" and 9990 more); not redirecting\n")) {
		t.Errorf("header-less request: %d, %d bytes: %s", resp.StatusCode, len(body), body)
	}
	routedTable := NewTable("analytics", scaleEntries(t, scaleN, routed))
	if o := routedTable.Overlaps(); len(o) != 0 {
		t.Errorf("10,000 distinct routes overlap: %q", o)
	}
}
