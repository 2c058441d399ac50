package discover

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/sparkui/sparkui/runtime/sparkapi"
)

// Summary describes the sockets asked so far and their last answers, for the periodic
// "still waiting" log line.
func (f *Finder) Summary() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.cache) == 0 {
		if len(f.opts.Ports) > 0 {
			return "nothing listens on ports " + PortsString(f.opts.Ports)
		}
		return "no listening socket yet"
	}
	es := make([]*entry, 0, len(f.cache))
	for _, e := range f.cache {
		es = append(es, e)
	}
	// What may still become the UI first: starting up, denied, unreachable; then the rest.
	rank := func(v sparkapi.Verdict) int {
		switch v {
		case sparkapi.Match:
			return -1
		case sparkapi.StartingUp:
			return 0
		case sparkapi.Denied, sparkapi.Unproven, sparkapi.TLSMismatch, sparkapi.Failing:
			return 1
		case sparkapi.Unknown:
			return 2
		case sparkapi.OtherApp, sparkapi.NotLive:
			return 3
		}
		return 4
	}
	sort.Slice(es, func(i, j int) bool {
		ri, rj := rank(es[i].result.Verdict), rank(es[j].result.Verdict)
		if ri != rj {
			return ri < rj
		}
		return es[i].sock.Port < es[j].sock.Port
	})
	var b strings.Builder
	for i, e := range es {
		if i == 8 {
			fmt.Fprintf(&b, "; and %d more", len(es)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "port %d: %s", e.sock.Port, e.result.Verdict)
		if e.result.Detail != "" {
			fmt.Fprintf(&b, " (%s)", e.result.Detail)
		}
	}
	return b.String()
}

// PortsString writes ports as runs: "4040-4056", or "65530-65535,1024-1033" when Spark's range
// wraps.
func PortsString(ports []int) string {
	var b strings.Builder
	for i := 0; i < len(ports); {
		j := i
		for j+1 < len(ports) && ports[j+1] == ports[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j == i {
			b.WriteString(strconv.Itoa(ports[i]))
		} else {
			fmt.Fprintf(&b, "%d-%d", ports[i], ports[j])
		}
		i = j + 1
	}
	return b.String()
}
