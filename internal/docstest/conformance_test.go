package docstest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const conformanceDoc = "docs/spark-conformance.md"

// notKeys are string literals of sparkui's code that look like Spark properties and are not.
var notKeys = map[string]string{
	"spark.apache.org":     "the Apache operator's API group",
	"spark.stackable.tech": "the Stackable operator's API group",
	"spark.properties":     "the driver ConfigMap's data key",
}

// skipDirs hold no sparkui code that reads Spark's conf: the stand-in UI (its own rows belong
// to the stand-in's table) and the test kit.
var skipDirs = []string{"testkit", "runtime/internal/fakespark", ".git"}

var sparkKeyLiteral = regexp.MustCompile(`^spark\.[A-Za-z][A-Za-z0-9._-]*[A-Za-z0-9]$`)

// TestSparkConformanceTable: every Spark property sparkui's code names as a whole string
// literal has a row in docs/spark-conformance.md's configuration table; every test any table
// of that page names exists; every configuration row with a place in sparkui names a test.
func TestSparkConformanceTable(t *testing.T) {
	doc := read(t, conformanceDoc)
	rows := tableRows(t, section(t, doc, "## Spark configuration"))
	if len(rows) == 0 {
		t.Fatalf("%s: no rows under ## Spark configuration", conformanceDoc)
	}
	documented := map[string]bool{}
	for _, r := range rows {
		if len(r) != 5 {
			t.Errorf("%s: row %q has %d cells, want 5", conformanceDoc, r[0], len(r))
			continue
		}
		for _, m := range regexp.MustCompile("`(spark\\.[A-Za-z0-9._-]+)`").FindAllStringSubmatch(r[0], -1) {
			documented[m[1]] = true
		}
		if strings.TrimSpace(r[3]) != "–" && len(testRefs(r[4])) == 0 {
			t.Errorf("%s: row %q says where sparkui handles it (%s) but names no test", conformanceDoc, r[0], r[3])
		}
	}
	for key, files := range keysInCode(t) {
		if !documented[key] {
			t.Errorf("%s is read in %s but has no row in %s", key, strings.Join(files, ", "), conformanceDoc)
		}
	}
	for _, r := range tableRows(t, doc) {
		for _, ref := range testRefs(r[len(r)-1]) {
			if err := testExists(ref); err != "" {
				t.Errorf("%s: row %q names %s.%s: %s", conformanceDoc, r[0], ref[0], strings.TrimSuffix(ref[1]+"/"+ref[2], "/"), err)
			}
		}
	}
}

// section is the text of doc from heading to the next heading of the same level.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("%s: no %q", conformanceDoc, heading)
	}
	rest := doc[i+len(heading)+2:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// tableRows are the body rows of the Markdown tables in text, split into cells on the '|'
// that are not escaped.
func tableRows(t *testing.T, text string) [][]string {
	t.Helper()
	var rows [][]string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "|---") {
			continue
		}
		var cells []string
		var cur strings.Builder
		for i := 1; i < len(l); i++ {
			switch {
			case l[i] == '\\' && i+1 < len(l) && l[i+1] == '|':
				cur.WriteByte('|')
				i++
			case l[i] == '|':
				cells = append(cells, strings.TrimSpace(cur.String()))
				cur.Reset()
			default:
				cur.WriteByte(l[i])
			}
		}
		if cells[0] == "Key / behaviour" || cells[0] == "Behaviour" || cells[0] == "Id" {
			continue // a header
		}
		rows = append(rows, cells)
	}
	return rows
}

var testRef = regexp.MustCompile("`([a-z][a-z0-9_/-]*)\\.(Test[A-Za-z0-9_]+)(?:/([^`]+))?`")

func testRefs(cell string) [][]string {
	var out [][]string
	for _, m := range testRef.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1:])
	}
	return out
}

// testExists checks a reference (package dir, test function, subtest): "" when it exists.
func testExists(ref []string) string {
	dir, name, sub := filepath.Join("..", "..", ref[0]), ref[1], ref[2]
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	var src strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err.Error()
		}
		src.Write(b)
	}
	if !strings.Contains(src.String(), "func "+name+"(t *testing.T)") {
		return "no func " + name + " in " + ref[0]
	}
	switch {
	case sub == "":
	case name == "TestRuleFixtures":
		if st, err := os.Stat(filepath.Join(dir, "testdata", sub)); err != nil || !st.IsDir() {
			return "no fixture " + ref[0] + "/testdata/" + sub
		}
	case !strings.Contains(src.String(), strconv.Quote(sub)) && !strings.Contains(src.String(), strconv.Quote(strings.ReplaceAll(sub, "_", " "))):
		return "no subtest named " + sub + " in " + ref[0]
	}
	return ""
}

// keysInCode are the Spark properties sparkui's non-test Go code names as a whole string
// literal, with the files naming each.
func keysInCode(t *testing.T) map[string][]string {
	t.Helper()
	root := filepath.Join("..", "..")
	keys := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if slices.Contains(skipDirs, rel) || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil || !sparkKeyLiteral.MatchString(v) {
				return true
			}
			if _, skip := notKeys[v]; !skip && !slices.Contains(keys[v], rel) {
				keys[v] = append(keys[v], rel)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 10 {
		t.Fatalf("found only %d Spark properties in the code: the walk is broken", len(keys))
	}
	return keys
}
