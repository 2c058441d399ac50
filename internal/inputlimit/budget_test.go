package inputlimit

import (
	"fmt"
	"strings"
	"testing"
)

// TestApplicationsBoundary: once the input is read, a transform run may rewrite as many
// applications as the allowance leaves at AppCost each, and not one more; --max-applications,
// when set, replaces that bound (0: none).
func TestApplicationsBoundary(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
	read := Estimate(int64(len(in)), CountNodes([]byte(in)))
	memory := (read + 10*AppCost + Share - 1) / Share * 100 // the least whose allowance holds 10 applications
	b := Limits{Memory: memory, MemoryFrom: "--memory-limit"}.Budget()
	if _, err := b.ReadAll("in", strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	if err := b.Applications(10); err != nil {
		t.Errorf("10 applications: %v", err)
	}
	err := b.Applications(11)
	want := fmt.Sprintf("the input has 11 applications: rewriting them would take about %s of memory (%s for the input, 100.0 KiB for "+
		"each application's output), more than the %s allowed by a memory limit of %s (--memory-limit; 60 %% of it); give the process "+
		"more memory and raise the limit with --memory-limit=<bytes> or SPARKUI_MEMORY_LIMIT=<bytes> (e.g. 8Gi; 0: no limit), or bound the "+
		"applications alone with --max-applications=<n> or SPARKUI_MAX_APPLICATIONS=<n> (0: no limit), or split the input",
		Approx(read+11*AppCost), Approx(read), Approx(memory/100*Share), Human(memory))
	if err == nil || err.Error() != want {
		t.Errorf("11 applications: %v\nwant: %s", err, want)
	}
	set := Limits{Memory: memory, Applications: 1000, AppsSet: true}.Budget()
	if err := set.Applications(1000); err != nil {
		t.Errorf("--max-applications=1000, 1000 applications: %v", err)
	}
	if err := set.Applications(1001); err == nil || !strings.HasPrefix(err.Error(), "the input has 1001 applications, more than the limit of 1000 ") {
		t.Errorf("--max-applications=1000, 1001 applications: %v", err)
	}
	if err := (Limits{Memory: 0}).Budget().Applications(1 << 30); err != nil {
		t.Errorf("no memory limit: %v", err)
	}
}

// TestByteLimitFollowsMemory: with no --max-input-bytes, the bytes read are bounded by what
// the allowance leaves at ByteCost a byte, checked while reading.
func TestByteLimitFollowsMemory(t *testing.T) {
	l := Limits{Memory: 64 << 20, MemoryFrom: "--memory-limit"}
	want := (int64(64<<20)/100*60 - 16<<20) / 5
	if got := l.ByteLimit(); got != want {
		t.Fatalf("ByteLimit = %d, want %d", got, want)
	}
	if got := Detect(func(string) ([]byte, error) { return []byte("max\n"), nil }).ByteLimit(); got != (int64(4<<30)/100*60-16<<20)/5 {
		t.Errorf("default ByteLimit = %d", got)
	}
	src := &countingReader{r: strings.NewReader(strings.Repeat("x", int(want)+1000))}
	_, err := l.Budget().ReadAll("stdin", src)
	if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("stdin: the input is larger than the limit of %d bytes (what a memory limit of 64Mi, --memory-limit, allows at ~5 bytes of memory an input byte)", want)) {
		t.Errorf("over the byte limit: %v", err)
	}
	if src.n != int(want)+1 {
		t.Errorf("read %d bytes, want the limit and one", src.n)
	}
}
