// Package inputlimit bounds what sparkui-fn takes on in one run, so that an input too large for
// the memory it has is refused with a message saying which limit and how to raise it, instead
// of the Go runtime's "fatal error: out of memory" (or the kernel's OOM kill) with nothing on
// stdout. The function holds the whole input and the whole output as YAML node trees (every
// rule sees every object), so its memory grows with both:
//
//   - Bytes bounds what is read (standard input, the files of standalone mode and of
//     `sparkui-fn validate`), checked while reading, before anything is parsed;
//   - Applications bounds how many applications one transform run rewrites, checked once the
//     input is parsed, before the output is built: each application adds its UI Service, RBAC,
//     sidecar and routes, whatever the size of its own manifest (a two-line SparkApplication
//     comes out as some 2.8 KB of YAML), so a byte bound alone does not bound the output.
//
// The defaults fit a 4 GiB container with room to spare; docs/performance.md has the
// measurements behind them.
package inputlimit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

const (
	// BytesFlag and BytesEnv set Limits.Bytes; the flag wins.
	BytesFlag = "max-input-bytes"
	BytesEnv  = "SPARKUI_MAX_INPUT_BYTES"
	// AppsFlag and AppsEnv set Limits.Applications; the flag wins.
	AppsFlag = "max-applications"
	AppsEnv  = "SPARKUI_MAX_APPLICATIONS"

	// DefaultBytes: 16 MiB of input.
	DefaultBytes int64 = 16 << 20
	// DefaultApplications: applications rewritten in one run.
	DefaultApplications = 10000
)

// Limits are the bounds of one run; 0 means no bound.
type Limits struct {
	Bytes        int64
	Applications int
}

// Defaults are the limits with neither flag nor environment variable set.
func Defaults() Limits { return Limits{Bytes: DefaultBytes, Applications: DefaultApplications} }

// FromEnv is Defaults overridden by the environment variables that are set: kustomize runs an
// exec function with no arguments but with its own environment (kyaml fn/runtime/exec/exec.go).
func FromEnv(getenv func(string) string) (Limits, error) {
	l := Defaults()
	if v := getenv(BytesEnv); v != "" {
		n, err := ParseBytes(v)
		if err != nil {
			return l, fmt.Errorf("%s=%q: %v", BytesEnv, v, err)
		}
		l.Bytes = n
	}
	if v := getenv(AppsEnv); v != "" {
		n, err := parseCount(v)
		if err != nil {
			return l, fmt.Errorf("%s=%q: %v", AppsEnv, v, err)
		}
		l.Applications = n
	}
	return l, nil
}

// TakeFlags removes --max-input-bytes and --max-applications (`--flag=value` or `--flag value`,
// one dash or two) from args, up to a "--", and applies them to l.
func TakeFlags(args []string, l Limits) ([]string, Limits, error) {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), l, nil
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || (name != BytesFlag && name != AppsFlag) {
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
		var err error
		if name == BytesFlag {
			l.Bytes, err = ParseBytes(val)
		} else {
			l.Applications, err = parseCount(val)
		}
		if err != nil {
			return nil, l, fmt.Errorf("--%s=%q: %v", name, val, err)
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

// TooLarge is the error of an input over Limits.Bytes.
type TooLarge struct {
	What  string // what was being read when the limit was reached
	Limit int64
}

func (e *TooLarge) Error() string {
	limit := fmt.Sprintf("%d bytes", e.Limit)
	if h := Human(e.Limit); h != strconv.FormatInt(e.Limit, 10) {
		limit = h + " (" + limit + ")"
	}
	why := "the default, " + Human(DefaultBytes) + ", keeps the function within a 4 GiB container"
	if e.Limit == DefaultBytes {
		why = "the default, which keeps the function within a 4 GiB container"
	}
	return fmt.Sprintf("%s: the input is larger than the limit of %s (%s); raise it with --%s=<bytes> or %s=<bytes> "+
		"(e.g. 64Mi; 0: no limit) and give the process the memory docs/performance.md lists for that size, or split the input",
		e.What, limit, why, BytesFlag, BytesEnv)
}

// TooManyApplications is the error of a run over Limits.Applications.
func TooManyApplications(n, limit int) error {
	why := fmt.Sprintf("the default, %d, keeps", DefaultApplications)
	if limit == DefaultApplications {
		why = "the default, which keeps"
	}
	return fmt.Errorf("the input has %d applications, more than the limit of %d one run rewrites (%s the function "+
		"within a 4 GiB container: every application's output is held until all is written); raise it with --%s=<n> "+
		"or %s=<n> (0: no limit) and give the process the memory docs/performance.md lists, or split the input",
		n, limit, why, AppsFlag, AppsEnv)
}

// Human writes n as ParseBytes reads it: in the largest binary unit that divides it.
func Human(n int64) string { return resource.NewQuantity(n, resource.BinarySI).String() }

// Budget is what is left of Limits.Bytes for the run: every reader of one run draws on it.
type Budget struct {
	limit int64 // 0: no limit
	used  int64
}

// NewBudget is a budget of limit bytes; 0 is no limit.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// ReadAll reads r to its end, or fails with a *TooLarge as soon as the budget is exceeded,
// having read at most one byte past it.
func (b *Budget) ReadAll(what string, r io.Reader) ([]byte, error) {
	if b == nil || b.limit == 0 {
		return io.ReadAll(r)
	}
	left := b.limit - b.used
	data, err := io.ReadAll(io.LimitReader(r, left+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > left {
		return nil, &TooLarge{What: what, Limit: b.limit}
	}
	b.used += int64(len(data))
	return data, nil
}

// ReadFile reads a file against the budget: a regular file whose size is over what is left
// is refused before it is read.
func (b *Budget) ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if b != nil && b.limit != 0 {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > b.limit-b.used {
			return nil, &TooLarge{What: path, Limit: b.limit}
		}
	}
	return b.ReadAll(path, f)
}

// Reader is r drawing on the budget as it is read: past the budget, Read fails with a
// *TooLarge.
func (b *Budget) Reader(what string, r io.Reader) io.Reader {
	if b == nil || b.limit == 0 {
		return r
	}
	return &reader{b: b, r: r, what: what}
}

type reader struct {
	b    *Budget
	r    io.Reader
	what string
}

func (r *reader) Read(p []byte) (int, error) {
	left := r.b.limit - r.b.used
	if left < 0 {
		return 0, &TooLarge{What: r.what, Limit: r.b.limit}
	}
	if int64(len(p)) > left+1 {
		p = p[:left+1]
	}
	n, err := r.r.Read(p)
	r.b.used += int64(n)
	if r.b.used > r.b.limit {
		return 0, &TooLarge{What: r.what, Limit: r.b.limit}
	}
	return n, err
}

// Draw counts n bytes of what (read by someone else) against the budget, and fails with a
// *TooLarge when they exceed it.
func (b *Budget) Draw(what string, n int64) error {
	if b == nil || b.limit == 0 {
		return nil
	}
	b.used += n
	if b.used > b.limit {
		return &TooLarge{What: what, Limit: b.limit}
	}
	return nil
}
