package report

import "testing"

func TestSARIFGolden(t *testing.T) { golden(t, WriteSARIF, "sarif.json") }
