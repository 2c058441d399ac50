package report

import "testing"

func TestJSONGolden(t *testing.T) { golden(t, WriteJSON, "json") }
