package inputlimit

import (
	"fmt"
	"io"
	"os"
)

// Budget is what one run has drawn on its Limits: every reader of one run draws on it, and the
// function asks it about the applications once the input is parsed.
type Budget struct {
	l         Limits
	byteLimit int64 // 0: no limit
	bytes     int64
	nodes     int64
}

// NewBudget is a budget of limit bytes and no memory estimate; 0 is no limit.
func NewBudget(limit int64) *Budget {
	return &Budget{l: Limits{Bytes: limit, BytesSet: true}, byteLimit: limit}
}

// Budget is a budget of l: bytes bounded while reading, the estimate once read.
func (l Limits) Budget() *Budget { return &Budget{l: l, byteLimit: l.ByteLimit()} }

// ReadAll reads r to its end, or fails with a *TooLarge as soon as the bytes are over the
// limit, having read at most one byte past it; then, still before anything is parsed, with a
// *TooLarge when the estimate of everything read in the run is over the allowance.
func (b *Budget) ReadAll(what string, r io.Reader) ([]byte, error) {
	if b == nil {
		return io.ReadAll(r)
	}
	var data []byte
	var err error
	if b.byteLimit == 0 {
		data, err = io.ReadAll(r)
	} else {
		left := b.byteLimit - b.bytes
		data, err = io.ReadAll(io.LimitReader(r, left+1))
		if err == nil && int64(len(data)) > left {
			return nil, b.tooLarge(what)
		}
	}
	if err != nil {
		return nil, err
	}
	b.bytes += int64(len(data))
	if a := b.l.Allowance(); a > 0 {
		b.nodes += CountNodes(data)
		if Estimate(b.bytes, b.nodes) > a {
			return nil, &TooLarge{What: what, Limits: b.l, Bytes: b.bytes, Nodes: b.nodes}
		}
	}
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
	if b != nil && b.byteLimit != 0 {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > b.byteLimit-b.bytes {
			return nil, b.tooLarge(path)
		}
	}
	return b.ReadAll(path, f)
}

// Draw counts n bytes of what (read by someone else, not held) against the byte limit, and
// fails with a *TooLarge when they exceed it.
func (b *Budget) Draw(what string, n int64) error {
	if b == nil || b.byteLimit == 0 {
		return nil
	}
	b.bytes += n
	if b.bytes > b.byteLimit {
		return b.tooLarge(what)
	}
	return nil
}

func (b *Budget) tooLarge(what string) error {
	return &TooLarge{What: what, Limits: b.l, ByteLimit: b.byteLimit}
}

// Applications is nil when a transform run may rewrite n applications of the input read:
// within --max-applications when it is set, else within the allowance.
func (b *Budget) Applications(n int) error {
	if b == nil {
		return nil
	}
	if b.l.AppsSet {
		if b.l.Applications > 0 && n > b.l.Applications {
			return fmt.Errorf("the input has %d applications, more than the limit of %d one run rewrites (set by --%s or %s); "+
				"raise it with --%s=<n> or %s=<n> (0: no limit) and give the process the memory docs/performance.md lists, or split the input",
				n, b.l.Applications, AppsFlag, AppsEnv, AppsFlag, AppsEnv)
		}
		return nil
	}
	a := b.l.Allowance()
	if a == 0 {
		return nil
	}
	read := Estimate(b.bytes, b.nodes)
	if need := read + int64(n)*AppCost; need > a {
		return fmt.Errorf("the input has %d applications: rewriting them would take about %s of memory (%s for the input, "+
			"%s for each application's output), more than the %s allowed by a memory limit of %s (%s; %d %% of it); give the "+
			"process more memory and raise the limit with --%s=<bytes> or %s=<bytes> (e.g. 8Gi; 0: no limit), or bound the "+
			"applications alone with --%s=<n> or %s=<n> (0: no limit), or split the input",
			n, Approx(need), Approx(read), Approx(AppCost), Approx(a), Human(b.l.Memory), b.l.MemoryFrom, Share,
			MemoryFlag, MemoryEnv, AppsFlag, AppsEnv)
	}
	return nil
}

// TooLarge is the error of an input over its limits, found before it is parsed: over the byte
// limit when ByteLimit is set, else over the allowance by its estimate.
type TooLarge struct {
	What   string // what was being read when the limit was reached
	Limits Limits
	// ByteLimit is the byte limit that was reached; 0 when it was the estimate.
	ByteLimit int64
	// Bytes and Nodes are what was read in the run, the reader's included, for the estimate.
	Bytes, Nodes int64
}

func (e *TooLarge) Error() string {
	raiseMemory := fmt.Sprintf("give the process more memory and raise the limit with --%s=<bytes> or %s=<bytes> (e.g. 8Gi; 0: no limit)", MemoryFlag, MemoryEnv)
	if e.ByteLimit == 0 {
		a := e.Limits.Allowance()
		return fmt.Sprintf("%s: the input would take about %s of memory to parse and hold (%d YAML nodes in %s: ~%d bytes a node, "+
			"%d a byte), more than the %s allowed by a memory limit of %s (%s; %d %% of it); %s, or split the input",
			e.What, Approx(Estimate(e.Bytes, e.Nodes)), e.Nodes, Approx(e.Bytes), NodeCost, ByteCost,
			Approx(a), Human(e.Limits.Memory), e.Limits.MemoryFrom, Share, raiseMemory)
	}
	limit := fmt.Sprintf("%d bytes", e.ByteLimit)
	if h := Human(e.ByteLimit); h != fmt.Sprint(e.ByteLimit) {
		limit = h + " (" + limit + ")"
	}
	if e.Limits.BytesSet {
		return fmt.Sprintf("%s: the input is larger than the limit of %s (set by --%s or %s); raise it with --%s=<bytes> or %s=<bytes> "+
			"(e.g. 64Mi; 0: no limit) and give the process the memory docs/performance.md lists for that size, or split the input",
			e.What, limit, BytesFlag, BytesEnv, BytesFlag, BytesEnv)
	}
	return fmt.Sprintf("%s: the input is larger than the limit of %s (what a memory limit of %s, %s, allows at ~%d bytes of memory "+
		"an input byte); %s, or set --%s=<bytes> or %s=<bytes> (0: no limit), or split the input",
		e.What, limit, Human(e.Limits.Memory), e.Limits.MemoryFrom, ByteCost, raiseMemory, BytesFlag, BytesEnv)
}

// Approx writes n bytes for a reader, rounded: 57.3 MB, 2.4 GiB.
func Approx(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
