package report

import "testing"

func TestTextGolden(t *testing.T) { golden(t, WriteText, "txt") }
