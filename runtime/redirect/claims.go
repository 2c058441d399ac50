package redirect

import (
	"slices"
	"sort"
	"strconv"
)

// The route claims of a Table, indexed so that a request and the overlap report cost what the
// matching claims cost, not what the namespace holds. Measured at 10,000 handed-off Services
// (BenchmarkTable, BenchmarkChurn, issue 33): comparing every claim with every other took
// 0.96 s per change with 10,000 distinct routes, and 29 s and 8 GB per change when the
// Services had no routes (each claims every header-less request, so all 50 million pairs
// overlap); a header-less request walked all 10,000 claims (0.26 ms).

// claimKey is one route claim: a host ("" = any) and a prefix ("" = the root).
type claimKey struct{ host, prefix string }

// claimIndex holds the accepted claims of a Table; every list is of indices into its entries,
// ascending (entries are sorted by name, so lists are in name order).
type claimIndex struct {
	exact    map[claimKey][]int // by host and prefix
	byPrefix map[string][]int   // by prefix, whatever the host
	lens     []int              // the distinct lengths of non-root prefixes, ascending
}

func newClaimIndex(es []Entry) claimIndex {
	x := claimIndex{exact: map[claimKey][]int{}, byPrefix: map[string][]int{}}
	seen := map[int]bool{}
	for i, e := range es {
		if e.Refused != "" {
			continue
		}
		k := claimKey{e.Host, e.Prefix}
		x.exact[k] = append(x.exact[k], i)
		x.byPrefix[e.Prefix] = append(x.byPrefix[e.Prefix], i)
		if n := len(e.Prefix); n > 0 && !seen[n] {
			seen[n] = true
			x.lens = append(x.lens, n)
		}
	}
	sort.Ints(x.lens)
	return x
}

// matching lists the accepted claims a request matches (ByHost's rule 2): host is the request's
// host, lower case ("" matches only claims for any host); a claim matches when its prefix is a
// segment prefix of path, or equals fwd when the request carried X-Forwarded-Context. Only
// prefixes of path as long as some claim's are looked up, so a long path costs no more than
// the table's distinct prefix lengths.
func (x claimIndex) matching(host, path, fwd string, hasFwd bool) []int {
	var out []int
	add := func(prefix string) {
		out = append(out, x.exact[claimKey{host, prefix}]...)
		if host != "" {
			out = append(out, x.exact[claimKey{"", prefix}]...)
		}
	}
	if hasFwd {
		add(fwd)
	}
	add("")
	for _, n := range x.lens {
		if n > len(path) {
			break
		}
		if n == len(path) || path[n] == '/' {
			add(path[:n])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// maxOverlaps is how many overlapping pairs Overlaps names; it says that there are more after
// them. Thousands of Services without routes overlap in millions of pairs, and the list is
// only for one log line.
const maxOverlaps = 10

// Overlaps lists the pairs of accepted route claims that one request could match together
// (same host or one for any host, and one prefix a segment prefix of the other): a request
// without X-Sparkui-Service matching such a pair is refused. For the log: at most maxOverlaps
// pairs, in name order when there are no more, then a last element saying how many more
// Services take part.
func (t *Table) Overlaps() []string {
	type pair struct{ a, b int }
	found := map[pair]bool{}
	// Every overlapping pair is found from the claim whose prefix is the longer (or from
	// either, when equal): walking a claim's own prefix and its ancestors, every claim listed
	// there is compatible with it.
	for i, e := range t.entries {
		if e.Refused != "" {
			continue
		}
		t.claims.ancestors(e, func(js []int) {
			for _, j := range js {
				if j != i {
					found[pair{min(i, j), max(i, j)}] = true
				}
			}
		})
		if len(found) > maxOverlaps {
			break
		}
	}
	ps := make([]pair, 0, len(found))
	for p := range found {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(x, y pair) int {
		if x.a != y.a {
			return x.a - y.a
		}
		return x.b - y.b
	})
	var out []string
	for n, p := range ps {
		if n == maxOverlaps {
			out = append(out, "more (the first "+strconv.Itoa(maxOverlaps)+" pairs named)")
			break
		}
		out = append(out, t.entries[p.a].Name+" and "+t.entries[p.b].Name)
	}
	return out
}

// ancestors calls f with the lists of accepted claims compatible with e (its host, or any
// host; every host when e claims any) whose prefix is e's own or a segment prefix of it.
func (x claimIndex) ancestors(e Entry, f func([]int)) {
	at := func(prefix string) {
		if e.Host == "" {
			f(x.byPrefix[prefix])
			return
		}
		f(x.exact[claimKey{e.Host, prefix}])
		f(x.exact[claimKey{"", prefix}])
	}
	p := e.Prefix
	if p != "" {
		at("")
	}
	for k := 1; k < len(p); k++ {
		if p[k] == '/' {
			at(p[:k])
		}
	}
	at(p)
}
