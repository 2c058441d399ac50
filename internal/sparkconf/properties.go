// Package sparkconf reads Spark configuration as spark-submit hands it to the driver: the
// java.util.Properties text of the driver ConfigMap's spark.properties key, and the handful of
// settings sparkui derives from it (UI port, retries, TLS, modes).
package sparkconf

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// SyntaxError is a spark.properties line Java's Properties.load would refuse. The only such
// case in the format is a malformed \uXXXX escape: everything else is readable somehow.
type SyntaxError struct {
	Line int // 1-based line of the logical line's start
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Parse reads java.util.Properties text (the format of spark.properties) the way
// Properties.load does: '#' and '!' comments, '=', ':' or white space between key and value,
// backslash line continuations, and the \t \n \r \f \uXXXX escapes (any other escaped
// character stands for itself, which is how '\:' and '\=' appear in Spark's output). Later
// keys win. Values are trimmed at both ends, as spark-submit does when it loads the file.
func Parse(text string) (map[string]string, error) {
	props := map[string]string{}
	lines := splitLines(text)
	for i := 0; i < len(lines); i++ {
		start := i
		line := trimLeadingSpace(lines[i])
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// A logical line continues while it ends in an odd number of backslashes; the
		// continuation's leading white space is dropped.
		var b strings.Builder
		for {
			if endsInOddBackslashes(line) {
				b.WriteString(line[:len(line)-1])
				if i+1 >= len(lines) {
					break
				}
				i++
				line = trimLeadingSpace(lines[i])
				continue
			}
			b.WriteString(line)
			break
		}
		key, value, err := splitKeyValue(b.String())
		if err != nil {
			return nil, &SyntaxError{Line: start + 1, Msg: err.Error()}
		}
		props[key] = javaTrim(value)
	}
	return props, nil
}

// splitLines splits on \n, \r and \r\n, as Properties.load's LineReader does.
func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimLeadingSpace(s string) string {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return s[i:]
}

func endsInOddBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitKeyValue finds the first unescaped '=', ':' or white space; white space around a
// separator belongs to neither side.
func splitKeyValue(line string) (string, string, error) {
	keyEnd, valStart := len(line), len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' {
			keyEnd, valStart = i, i+1
			break
		}
		if isSpace(c) {
			keyEnd = i
			j := i
			for j < len(line) && isSpace(line[j]) {
				j++
			}
			if j < len(line) && (line[j] == '=' || line[j] == ':') {
				j++
			}
			valStart = j
			break
		}
	}
	key, err := unescape(line[:keyEnd])
	if err != nil {
		return "", "", err
	}
	value, err := unescape(trimLeadingSpace(line[valStart:]))
	if err != nil {
		return "", "", err
	}
	return key, value, nil
}

func unescape(s string) (string, error) {
	if strings.IndexByte(s, '\\') < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			break
		}
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, ok := hex4(s, i+1)
			if !ok {
				return "", fmt.Errorf("malformed \\uxxxx encoding in %q", s)
			}
			i += 4
			// Java strings are UTF-16: a surrogate pair arrives as two escapes.
			if utf16.IsSurrogate(r) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if r2, ok := hex4(s, i+3); ok {
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						r = pair
						i += 6
					}
				}
			}
			b.WriteRune(r) // an unpaired surrogate becomes U+FFFD
		default:
			// Java keeps the character after a lone backslash as is: "\:" is ":".
			_, size := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+size])
			i += size - 1
		}
	}
	return b.String(), nil
}

func hex4(s string, at int) (rune, bool) {
	if at+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, h := range []byte(s[at : at+4]) {
		d, ok := hexVal(h)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// javaTrim is Java's String.trim, which spark-submit applies to every value: it strips every
// character up to U+0020, and nothing else (no Unicode spaces).
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}
