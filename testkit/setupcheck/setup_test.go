// Package setupcheck holds the test that keeps .ci/setup.sh's package list true: the Debian
// packages `make test` installs are exactly those the tests run.
package setupcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// notPackaged are run by name but come with the machine, not from .ci/setup.sh: the Go
// toolchain (make itself needs it), bash and sh (Debian marks them Essential), and sparkui-fn,
// which the tests build and put first on PATH.
var notPackaged = map[string]string{
	"go":         "the Go toolchain",
	"bash":       "Essential in Debian",
	"sh":         "Essential in Debian",
	"sparkui-fn": "built by the test that runs it",
}

// row is one line of setup.sh's NEEDS table.
type row struct{ bin, pkg string }

func readNeeds(t *testing.T, path string) []row {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "\nNEEDS='\n")
	if start < 0 {
		t.Fatalf("%s: no NEEDS='...' table", path)
	}
	s = s[start+len("\nNEEDS='\n"):]
	end := strings.Index(s, "\n'\n")
	if end < 0 {
		t.Fatalf("%s: NEEDS table not closed by a line holding only '", path)
	}
	var rows []row
	for i, line := range strings.Split(s[:end], "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 3 {
			t.Fatalf("%s: NEEDS line %d %q: want binary, package and who runs it", path, i+1, line)
		}
		rows = append(rows, row{f[0], f[1]})
	}
	if len(rows) == 0 {
		t.Fatalf("%s: empty NEEDS table", path)
	}
	return rows
}

// use is where a Go file runs a program by name, or names a string.
type use struct {
	name string
	at   string
}

// scan parses every Go file of the repository (product, tests, testkit; not testdata) and
// returns the programs started by name: the literal program of exec.Command, CommandContext
// and LookPath calls (any receiver, so testnode's n.Command too), of `append([]string{"prog",
// ...}, ...)` in that position, and of imagetest's need(t, "prog", ...); and every string
// literal, for rows whose binary is run by another program (iptables by kube-proxy).
func scan(t *testing.T, root string) (execs []use, literals map[string]bool) {
	t.Helper()
	literals = map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING {
					literals[s] = true
				}
			case *ast.CallExpr:
				if prog, ok := program(n); ok {
					rel, _ := filepath.Rel(root, fset.Position(n.Pos()).Filename)
					execs = append(execs, use{prog, rel + ":" + strconv.Itoa(fset.Position(n.Pos()).Line)})
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return execs, literals
}

// program is the literal program name a call starts, if it is one of the calls scan knows.
func program(call *ast.CallExpr) (string, bool) {
	var name string
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		name = fn.Sel.Name
	case *ast.Ident:
		name = fn.Name
	}
	pos := -1
	switch name {
	case "Command", "LookPath":
		pos = 0
	case "CommandContext", "need":
		pos = 1
	}
	if pos < 0 || len(call.Args) <= pos {
		return "", false
	}
	arg := call.Args[pos]
	if c, ok := arg.(*ast.CallExpr); ok { // append([]string{"prog", ...}, args...)
		if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "append" && len(c.Args) > 0 {
			arg = c.Args[0]
		}
	}
	if cl, ok := arg.(*ast.CompositeLit); ok && len(cl.Elts) > 0 {
		arg = cl.Elts[0]
	}
	lit, ok := arg.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil || s == "" || strings.Contains(s, "/") || strings.HasPrefix(s, "-") {
		return "", false // a path the test built, or a flag of a Command wrapper
	}
	return s, true
}

func TestSetupListsWhatTestsRun(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	rows := readNeeds(t, filepath.Join(root, ".ci", "setup.sh"))
	execs, literals := scan(t, root)

	listed := map[string]string{}
	for _, r := range rows {
		listed[r.bin] = r.pkg
	}
	run := map[string]bool{}
	var unlisted []string
	for _, e := range execs {
		run[e.name] = true
		if _, ok := listed[e.name]; ok {
			continue
		}
		if _, ok := notPackaged[e.name]; ok {
			continue
		}
		unlisted = append(unlisted, e.name+" ("+e.at+")")
	}
	sort.Strings(unlisted)
	for _, u := range unlisted {
		t.Errorf("%s is run by name but no row of .ci/setup.sh's NEEDS provides it: add its Debian package there", u)
	}

	// Every row must be needed: its binary is run by name, or (run by another program, or a
	// file such as a CNI plugin) named by a string literal, for a file its directory too.
	for _, r := range rows {
		if run[r.bin] {
			continue
		}
		if strings.HasPrefix(r.bin, "/") {
			if literals[filepath.Dir(r.bin)] && literals[filepath.Base(r.bin)] {
				continue
			}
		} else if literals[r.bin] {
			continue
		}
		t.Errorf(".ci/setup.sh installs %s for %s, but no Go file runs or names it: drop the row", r.pkg, r.bin)
	}
}
