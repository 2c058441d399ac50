package yamlx

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// SyntaxError is a YAML syntax error placed in a multi-document stream: the document (from 1)
// and the line (from 1) within the whole stream, and the column where known.
type SyntaxError struct {
	Doc, Line, Column int
	Msg               string
}

func (e *SyntaxError) Error() string {
	where := fmt.Sprintf("document %d, line %d", e.Doc, e.Line)
	if e.Column > 0 {
		where += fmt.Sprintf(", column %d", e.Column)
	}
	return where + ": " + e.Msg
}

// separator is how kyaml's reader (kio.ByteReader, splitDocuments) cuts a stream into
// documents: any line that starts with ---.
var separator = regexp.MustCompile(`\n---.*\n`)

// CheckStream parses every document of a stream as kyaml's reader splits it, and places the
// first syntax error in the stream; nil when every document parses. yaml.v3's messages count
// lines within the document kyaml handed it, name none for a NUL byte or invalid UTF-8, and are
// one line early for parser errors (it prints the 0-based line of the construct) and for a tab
// that breaks indentation (it prints the line of the block the tab is in).
func CheckStream(data []byte) *SyntaxError {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	start, line := 0, 1
	cuts := append(separator.FindAllStringIndex(s, -1), []int{len(s), len(s)})
	for i, c := range cuts {
		doc := s[start:c[0]]
		if c[0] < len(s) {
			doc += "\n"
		}
		if e := checkDoc(doc); e != nil {
			e.Doc, e.Line = i+1, line+e.Line-1
			return e
		}
		line += strings.Count(s[start:c[1]], "\n")
		start = c[1]
	}
	return nil
}

var lineMsg = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// checkDoc parses one document; the error's line is within it.
func checkDoc(doc string) *SyntaxError {
	var n yaml.Node
	err := yaml.NewDecoder(strings.NewReader(doc)).Decode(&n)
	if err == nil || err == io.EOF {
		return nil
	}
	if e := badCharacter(doc); e != nil {
		return e
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if m := lineMsg.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if strings.HasPrefix(msg, "did not find expected") {
			line++ // a parser error: yaml.v3 printed the 0-based line
		}
	}
	e := &SyntaxError{Line: line, Msg: msg}
	if strings.Contains(msg, "tab character") || strings.Contains(msg, "cannot start any token") {
		lines := strings.Split(doc, "\n")
		for l := max(line-1, 0); l < len(lines); l++ {
			indent := lines[l][:len(lines[l])-len(strings.TrimLeft(lines[l], " \t"))]
			if col := strings.IndexByte(indent, '\t'); col >= 0 {
				e.Line, e.Column = l+1, col+1
				if !strings.Contains(msg, "tab") {
					e.Msg += " (a tab: YAML indents with spaces only)"
				}
				break
			}
		}
	}
	return e
}

// badCharacter places the first byte YAML refuses: invalid UTF-8, or a control character other
// than tab, line feed and carriage return (YAML 1.2, c-printable).
func badCharacter(doc string) *SyntaxError {
	line, col := 1, 1
	for i := 0; i < len(doc); {
		r, size := utf8.DecodeRuneInString(doc[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return &SyntaxError{Line: line, Column: col, Msg: fmt.Sprintf("invalid UTF-8 (byte 0x%02x)", doc[i])}
		case (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f || (r >= 0x80 && r <= 0x9f && r != 0x85) || r == 0xfffe || r == 0xffff:
			return &SyntaxError{Line: line, Column: col, Msg: fmt.Sprintf("control character %U is not allowed", r)}
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return nil
}
