package docstest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// standInDir holds the stand-in Spark UI (package fakespark and the fakespark-ui binary).
const standInDir = "runtime/internal/fakespark"

// behaviourMarker marks the code that implements one behaviour of Spark the stand-in models:
// the stand-in's list of behaviours is these markers, kept next to the code so that whoever
// adds a behaviour sees where its id goes.
var behaviourMarker = regexp.MustCompile(`(?m)^\s*// conformance: ([a-z0-9-]+)$`)

// TestStandInBehaviourTable: every behaviour the stand-in marks in its code has a row under
// "## The stand-in's behaviours" of docs/spark-conformance.md, every row is a marked
// behaviour, and every row names a test (TestSparkConformanceTable checks that it exists).
func TestStandInBehaviourTable(t *testing.T) {
	marked := behavioursInCode(t)
	rows := tableRows(t, section(t, read(t, conformanceDoc), "## The stand-in's behaviours"))
	inDoc := map[string]bool{}
	for _, r := range rows {
		if len(r) != 6 {
			t.Errorf("%s: stand-in row %q has %d cells, want 6", conformanceDoc, r[0], len(r))
			continue
		}
		id := strings.Trim(r[0], "`")
		if inDoc[id] {
			t.Errorf("%s: stand-in behaviour %s has two rows", conformanceDoc, id)
		}
		inDoc[id] = true
		if _, ok := marked[id]; !ok {
			t.Errorf("%s: row %s names no behaviour of the stand-in (no \"// conformance: %s\" under %s)", conformanceDoc, id, id, standInDir)
		}
		if len(testRefs(r[5])) == 0 {
			t.Errorf("%s: stand-in row %s names no test", conformanceDoc, id)
		}
	}
	for id, files := range marked {
		if !inDoc[id] {
			t.Errorf("stand-in behaviour %s (%s) has no row under ## The stand-in's behaviours in %s", id, strings.Join(files, ", "), conformanceDoc)
		}
	}
}

// behavioursInCode are the ids the stand-in's non-test Go files mark, with the files marking
// each.
func behavioursInCode(t *testing.T) map[string][]string {
	t.Helper()
	root := filepath.Join("..", "..")
	ids := map[string][]string{}
	err := filepath.WalkDir(filepath.Join(root, standInDir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for _, m := range behaviourMarker.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(ids[m[1]], filepath.ToSlash(rel)) {
				ids[m[1]] = append(ids[m[1]], filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < 10 {
		t.Fatalf("found only %d marked behaviours under %s: the walk is broken", len(ids), standInDir)
	}
	return ids
}
