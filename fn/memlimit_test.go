package main

import (
	"errors"
	"runtime/debug"
	"testing"
)

func TestCgroupMemoryLimit(t *testing.T) {
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if s, ok := m[p]; ok {
				return []byte(s), nil
			}
			return nil, errors.New("no such file")
		}
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int64
		ok    bool
	}{
		{"v2 limit", map[string]string{"/sys/fs/cgroup/memory.max": "4294967296\n"}, 4 << 30, true},
		{"v2 no limit", map[string]string{"/sys/fs/cgroup/memory.max": "max\n", "/sys/fs/cgroup/memory/memory.limit_in_bytes": "1024\n"}, 0, false},
		{"v1 limit", map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "2147483648\n"}, 2 << 30, true},
		{"v1 no limit", map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0, false},
		{"no cgroup", nil, 0, false},
	} {
		got, ok := cgroupMemoryLimit(files(tc.files))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestSetMemoryLimit: the garbage collector's soft limit is 85 % of the memory the input
// limits use (--memory-limit, also among validate's flags, then SPARKUI_MEMORY_LIMIT), so the
// live heap they admit (60 % of it) never peaks at twice that; GOMEMLIMIT wins.
func TestSetMemoryLimit(t *testing.T) {
	was := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(was) })
	for _, tc := range []struct {
		args            []string
		env, gomemlimit string
		want            int64
	}{
		{[]string{"--memory-limit=8Gi"}, "", "", (8 << 30) / 100 * 85},
		{[]string{"validate", "--memory-limit", "2Gi", "in.yaml"}, "1Gi", "", (2 << 30) / 100 * 85},
		{nil, "1Gi", "", (1 << 30) / 100 * 85},
		{[]string{"--memory-limit=8Gi"}, "", "100MiB", 12345},
	} {
		debug.SetMemoryLimit(12345)
		t.Setenv("SPARKUI_MEMORY_LIMIT", tc.env)
		t.Setenv("GOMEMLIMIT", tc.gomemlimit)
		setMemoryLimit(tc.args)
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("%q, SPARKUI_MEMORY_LIMIT=%q, GOMEMLIMIT=%q: soft limit %d, want %d", tc.args, tc.env, tc.gomemlimit, got, tc.want)
		}
	}
}
