package main

import (
	"os"
	"strings"
	"testing"
)

// TestHistoryServerSwitchedOff: the function run on its own output with historyServer
// removed from its config takes the hand-off env out of the runtime again, and reports
// nothing; switched on again it writes the golden output back.
func TestHistoryServerSwitchedOff(t *testing.T) {
	on, err := os.ReadFile("../testdata/history-server/expected.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const block = "    historyServer:\n      url: https://spark-history.example.com\n      redirectorPort: 8090\n"
	if !strings.Contains(string(on), block) {
		t.Fatal("the history-server golden changed: update the test")
	}
	off := runProcessor(t, []byte(strings.Replace(string(on), block, "    service:\n      enabled: true\n", 1)))
	if strings.Contains(string(off), "SPARKUI_HISTORY_URL") || strings.Contains(string(off), "SPARKUI_REDIRECTOR_PORT") || strings.Contains(string(off), "results:") {
		t.Errorf("switched off, the output still has the hand-off env or results:\n%s", off)
	}
	back := runProcessor(t, []byte(strings.Replace(string(off), "    service:\n      enabled: true\n", block, 1)))
	if string(back) != string(on) {
		t.Errorf("switched on again, the output differs from the golden:\n%s", back)
	}
}
