package report

import "testing"

func TestJUnitGolden(t *testing.T) { golden(t, WriteJUnit, "xml") }
