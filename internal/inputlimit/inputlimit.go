// Package inputlimit bounds what sparkui-fn takes on in one run, so that an input too large for
// the memory it has is refused with a message saying which limit and how to raise it, instead
// of the Go runtime's "fatal error: out of memory" (or the kernel's OOM kill) with nothing on
// stdout. The function holds the whole input and the whole output as YAML node trees (every
// rule sees every object), and its memory follows what those trees hold, not the bytes:
// 10 KB of dashboard JSON in a block scalar is one node, 10 KB of short keys a thousand.
//
// So the bound is the memory the run has (Limits.Memory: the container's cgroup limit, else
// 4 GiB, or --memory-limit), and an estimate of what the input will take, from what
// docs/performance.md measured on the built binary (live heap, the most of each shape):
//
//   - before parsing, BaseCost + ByteCost a byte + NodeCost a YAML node, the nodes counted by a
//     scan of the bytes that allocates nothing (CountNodes);
//   - once parsed, before the output is built, AppCost more for each application a transform
//     run rewrites (its sidecar, UI Service, RBAC and routes, whatever the size of its manifest).
//
// The estimate may reach Share % of the memory: the garbage collector's soft limit is 85 % of
// a cgroup's limit (fn/memlimit.go), and a live heap close to that soft limit makes it collect
// all the time (docs/performance.md: 87 % of it took 2.6 times as long as 71 %). Bytes are
// also bounded while reading, at what the allowance leaves for bytes alone, so that a huge
// input is refused before it is held. An explicit --max-input-bytes or --max-applications
// replaces its derived bound.
package inputlimit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

const (
	// MemoryFlag and MemoryEnv set Limits.Memory; the flag wins.
	MemoryFlag = "memory-limit"
	MemoryEnv  = "SPARKUI_MEMORY_LIMIT"
	// BytesFlag and BytesEnv set Limits.Bytes; the flag wins.
	BytesFlag = "max-input-bytes"
	BytesEnv  = "SPARKUI_MAX_INPUT_BYTES"
	// AppsFlag and AppsEnv set Limits.Applications; the flag wins.
	AppsFlag = "max-applications"
	AppsEnv  = "SPARKUI_MAX_APPLICATIONS"

	// DefaultMemory is the memory assumed where the cgroup sets no limit: the container size
	// the documentation asks for.
	DefaultMemory int64 = 4 << 30
	// Share is the percentage of Limits.Memory the estimate may reach.
	Share = 60

	// The estimate's terms, measured (docs/performance.md, "Input limits and memory"), each
	// rounded up from the costliest shape: a 100 MB scalar took 5.0 bytes of live heap a byte,
	// 4,000,000 flow-sequence numbers and 2,260,000 short ConfigMap keys 193 and 190 a node,
	// 8,000 kubeflow SparkApplications 89 KiB each, parsing included.
	BaseCost int64 = 16 << 20
	ByteCost int64 = 5
	NodeCost int64 = 200
	AppCost  int64 = 100 << 10
)

// Limits are the bounds of one run; 0 means no bound.
type Limits struct {
	// Memory is the memory of the run, MemoryFrom where it was read (for messages).
	Memory     int64
	MemoryFrom string
	// Bytes bounds the bytes read when BytesSet; else Memory does (ByteLimit).
	Bytes    int64
	BytesSet bool
	// Applications bounds the applications rewritten when AppsSet; else Memory does.
	Applications int
	AppsSet      bool
}

const fromDefault = "the default, no cgroup memory limit being set"

// Defaults are the limits with no flag, no environment variable and no cgroup limit.
func Defaults() Limits { return Limits{Memory: DefaultMemory, MemoryFrom: fromDefault} }

// Detect is Defaults with the memory limit of the process's cgroup, when it has one.
func Detect(read func(string) ([]byte, error)) Limits {
	l := Defaults()
	if m, ok := CgroupMemory(read); ok {
		l.Memory, l.MemoryFrom = m, "the container's, from its cgroup"
	}
	return l
}

// CgroupMemory reads the memory limit of the process's cgroup: cgroup v2's memory.max, else
// v1's memory.limit_in_bytes (which says "no limit" with a number near 2^63).
func CgroupMemory(read func(string) ([]byte, error)) (int64, bool) {
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := read(p)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<50 {
			return 0, false // "max", or no limit in v1's words
		}
		return n, true
	}
	return 0, false
}

// Allowance is what the estimate may reach; 0: no bound.
func (l Limits) Allowance() int64 { return l.Memory / 100 * Share }

// ByteLimit bounds the bytes read: Bytes when set, else what the allowance leaves for bytes
// alone (the cheapest input per byte is one long scalar: no node to speak of); 0: no bound.
func (l Limits) ByteLimit() int64 {
	if l.BytesSet || l.Memory == 0 {
		return l.Bytes
	}
	return max((l.Allowance()-BaseCost)/ByteCost, 1)
}

// Estimate is the memory an input of bytes and nodes takes to parse and hold.
func Estimate(bytes, nodes int64) int64 { return BaseCost + ByteCost*bytes + NodeCost*nodes }

// FromEnv is l overridden by the environment variables that are set: kustomize runs an exec
// function with no arguments but with its own environment (kyaml fn/runtime/exec/exec.go).
func FromEnv(getenv func(string) string, l Limits) (Limits, error) {
	for _, name := range []string{MemoryEnv, BytesEnv, AppsEnv} {
		if v := getenv(name); v != "" {
			if err := l.set(name, v); err != nil {
				return l, fmt.Errorf("%s=%q: %v", name, v, err)
			}
		}
	}
	return l, nil
}

// Set applies the flag name (MemoryFlag, BytesFlag or AppsFlag) with the value v.
func (l *Limits) Set(name, v string) error {
	if err := l.set(name, v); err != nil {
		return fmt.Errorf("--%s=%q: %v", name, v, err)
	}
	return nil
}

func (l *Limits) set(name, v string) error {
	var err error
	switch name {
	case MemoryFlag, MemoryEnv:
		l.Memory, err = ParseBytes(v)
		l.MemoryFrom = "--" + MemoryFlag
		if name == MemoryEnv {
			l.MemoryFrom = MemoryEnv
		}
	case BytesFlag, BytesEnv:
		l.Bytes, err = ParseBytes(v)
		l.BytesSet = true
	case AppsFlag, AppsEnv:
		l.Applications, err = parseCount(v)
		l.AppsSet = true
	}
	return err
}

// TakeFlags removes --memory-limit, --max-input-bytes and --max-applications (`--flag=value`
// or `--flag value`, one dash or two) from args, up to a "--", and applies them to l.
func TakeFlags(args []string, l Limits) ([]string, Limits, error) {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), l, nil
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || (name != BytesFlag && name != AppsFlag && name != MemoryFlag) {
			out = append(out, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, l, fmt.Errorf("flag --%s needs a value", name)
			}
			i++
			val = args[i]
		}
		if err := l.Set(name, val); err != nil {
			return nil, l, err
		}
	}
	return out, l, nil
}

// ParseBytes reads a byte count as a Kubernetes quantity (apimachinery's resource.Quantity:
// 33554432, 32Mi, 1Gi, 5k, 3M), a whole non-negative number of bytes. 0 is no limit.
func ParseBytes(s string) (int64, error) {
	// ParseQuantity takes a bare suffix ("Mi") for 0, which here would lift the limit.
	q, err := resource.ParseQuantity(s)
	if err == nil && s[0] >= '0' && s[0] <= '9' {
		// Value rounds up and saturates on overflow: only a whole number of bytes below 2^62 that
		// it holds exactly counts.
		if n := q.Value(); n >= 0 && n < 1<<62 && resource.NewQuantity(n, q.Format).Cmp(q) == 0 {
			return n, nil
		}
	}
	return 0, errors.New("want a number of bytes, e.g. 33554432, 32Mi or 1Gi (0: no limit)")
}

func parseCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, errors.New("want a number of applications (0: no limit)")
	}
	return n, nil
}

// Human writes n as ParseBytes reads it: in the largest binary unit that divides it.
func Human(n int64) string { return resource.NewQuantity(n, resource.BinarySI).String() }
