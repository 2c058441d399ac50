package inputlimit

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	for _, n := range []int64{0, 1000, 1536, 16 << 20, 2 << 30} {
		if got, err := ParseBytes(Human(n)); err != nil || got != n {
			t.Errorf("ParseBytes(Human(%d)) = ParseBytes(%q) = %d, %v", n, Human(n), got, err)
		}
	}
	if h := Human(16 << 20); h != "16Mi" {
		t.Errorf("Human(16Mi) = %q", h)
	}
	for in, want := range map[string]int64{"0": 0, "1024": 1024, "1Ki": 1024, "16Mi": 16 << 20, "2Gi": 2 << 30, "5k": 5000, "3M": 3e6, "1.5Mi": 3 << 19} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "0.5", "Mi", "10MB", "99999999999Gi", " 10", "1K"} {
		if got, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", in, got)
		}
	}
}

// TestReadAllStopsAtTheBudget: a read fails once the byte limit is passed, having read at most
// one byte past it, and two reads of one run share the limit.
func TestReadAllStopsAtTheBudget(t *testing.T) {
	b := NewBudget(10)
	got, err := b.ReadAll("a", strings.NewReader("123456"))
	if err != nil || string(got) != "123456" {
		t.Fatalf("first read: %q, %v", got, err)
	}
	src := &countingReader{r: strings.NewReader(strings.Repeat("x", 1<<20))}
	_, err = b.ReadAll("b", src)
	var tl *TooLarge
	if !errors.As(err, &tl) || tl.What != "b" || tl.ByteLimit != 10 {
		t.Fatalf("second read: %v, want TooLarge of b at 10", err)
	}
	if src.n > 5 {
		t.Errorf("read %d bytes of the second input, want at most 5 (4 left, and one to know it is more)", src.n)
	}
	if data, err := NewBudget(0).ReadAll("d", strings.NewReader("unbounded")); err != nil || string(data) != "unbounded" {
		t.Errorf("no limit: %q, %v", data, err)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestTakeFlags(t *testing.T) {
	args, l, err := TakeFlags([]string{"-max-input-bytes", "1Mi", "fn.yaml", "--max-applications=5", "--memory-limit", "8Gi", "--", "--max-applications=7"}, Defaults())
	if err != nil || l.Bytes != 1<<20 || !l.BytesSet || l.Applications != 5 || !l.AppsSet || l.Memory != 8<<30 || l.MemoryFrom != "--memory-limit" ||
		strings.Join(args, " ") != "fn.yaml -- --max-applications=7" {
		t.Errorf("TakeFlags: %q %+v %v", args, l, err)
	}
}
