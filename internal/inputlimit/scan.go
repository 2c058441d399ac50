package inputlimit

// CountNodes estimates how many YAML nodes parsing data would build (yaml.v3's Node: a
// scalar, an alias, a mapping or a sequence), in one pass over the bytes and without
// allocating: it is what the input's memory follows (docs/performance.md: ~200 bytes of live
// heap a node, whatever the bytes), and it must be known before the parser builds them.
//
// It reads YAML's lexical structure only far enough to tell nodes from text: a block scalar
// (| or >) is one node however many lines it has, a quoted scalar one node whatever commas
// and colons it holds, a comment none. It leans high where cheap certainty is out of reach:
// a "- " entry counts one more than it makes when the entry is a scalar, and each line of a
// multi-line plain scalar counts as one. JSON (flow style) is counted exactly.
func CountNodes(data []byte) int64 {
	s := scanner{d: data, block: -1}
	for s.i < len(s.d) {
		s.line()
	}
	return s.n
}

type scanner struct {
	d     []byte
	i     int
	n     int64
	flow  int // depth of [ and {: lines then do not matter
	block int // >= 0: in a block scalar opened on a line of this indentation
	// inDoc: the document's first node was seen. A document's root is implicit in block style
	// (a mapping of keys, a sequence of entries), so it is counted there, once.
	inDoc bool
}

// line scans from the start of a line to the start of the next one (in flow context, to the
// end of the flow collections it is in).
func (s *scanner) line() {
	d := s.d
	start := s.i
	for s.i < len(d) && d[s.i] == ' ' {
		s.i++
	}
	indent := s.i - start
	if s.block >= 0 {
		if s.restEmpty() || indent > s.block {
			s.toEOL()
			s.i++
			return
		}
		s.block = -1
	}
	if s.flow == 0 && indent == 0 {
		if s.marker("---") || s.marker("...") {
			s.i += 3
			s.inDoc = false
		} else if s.i < len(d) && d[s.i] == '%' { // a directive
			s.toEOL()
		}
	}
	for s.i < len(d) {
		c := d[s.i]
		if !s.inDoc && !isSpace(c) && c != '#' {
			s.inDoc = true
			s.n++ // the root: one too many when it is a flow collection or a scalar
		}
		switch {
		case c == '\n':
			s.i++
			if s.flow == 0 {
				return
			}
		case c == ' ' || c == '\t' || c == '\r':
			s.i++
		case c == '#' && (s.i == 0 || isSpace(d[s.i-1])):
			s.toEOL()
		case c == '"' || c == '\'':
			s.n++
			s.quoted(c)
		case c == '[' || c == '{':
			s.n++
			s.flow++
			s.i++
		case c == ']' || c == '}':
			if s.flow > 0 {
				s.flow--
			}
			s.i++
		case c == ',' && s.flow > 0:
			s.i++
		case (c == '-' || c == '?') && s.flow == 0 && s.spaceAfter():
			if c == '-' {
				s.n++ // the entry: a collection, or (one too many) a scalar counted again below
			}
			s.i++
		case c == ':' && (s.flow > 0 || s.spaceAfter()):
			s.i++
			if s.flow == 0 && s.onlyProperties() {
				s.n++ // the value is on the lines below: a collection (or null)
			}
		case (c == '|' || c == '>') && s.flow == 0:
			s.n++
			s.block = indent
			s.toEOL()
		case c == '&' || c == '!': // an anchor or a tag: part of the node that follows
			s.token()
		case c == '*':
			s.n++
			s.token()
		default:
			s.n++
			s.plain()
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isFlowIndicator(c byte) bool { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}' }

func (s *scanner) spaceAfter() bool { return s.i+1 >= len(s.d) || isSpace(s.d[s.i+1]) }

func (s *scanner) marker(m string) bool {
	d := s.d[s.i:]
	return len(d) >= 3 && string(d[:3]) == m && (len(d) == 3 || isSpace(d[3]))
}

// restEmpty says whether only blanks and a comment are left on the line.
func (s *scanner) restEmpty() bool {
	for j := s.i; j < len(s.d); j++ {
		switch s.d[j] {
		case ' ', '\t', '\r':
		case '\n', '#':
			return true
		default:
			return false
		}
	}
	return true
}

// onlyProperties says whether only anchors, tags, blanks and a comment are left on the line
// (`driver: &pod # shared`: the node is the mapping below).
func (s *scanner) onlyProperties() bool {
	for j := s.i; j < len(s.d); j++ {
		switch c := s.d[j]; c {
		case ' ', '\t', '\r':
		case '\n', '#':
			return true
		case '&', '!':
			for j < len(s.d) && !isSpace(s.d[j]) {
				j++
			}
			j--
		default:
			return false
		}
	}
	return true
}

// toEOL moves to the line's '\n' (or the end).
func (s *scanner) toEOL() {
	for s.i < len(s.d) && s.d[s.i] != '\n' {
		s.i++
	}
}

func (s *scanner) quoted(q byte) {
	d := s.d
	for s.i++; s.i < len(d); s.i++ {
		switch {
		case q == '"' && d[s.i] == '\\':
			s.i++
		case d[s.i] == q && q == '\'' && s.i+1 < len(d) && d[s.i+1] == '\'':
			s.i++
		case d[s.i] == q:
			s.i++
			return
		}
	}
}

func (s *scanner) token() {
	for s.i < len(s.d) && !isSpace(s.d[s.i]) && (s.flow == 0 || !isFlowIndicator(s.d[s.i])) {
		s.i++
	}
}

// plain moves past a plain scalar: to the line's end, a ": ", a " #", or in flow context a
// flow indicator. Its first byte is never one of these (line handled them).
func (s *scanner) plain() {
	d := s.d
	for s.i++; s.i < len(d); s.i++ {
		c := d[s.i]
		if c == '\n' || c == '#' && isSpace(d[s.i-1]) || s.flow > 0 && isFlowIndicator(c) {
			return
		}
		if c == ':' && (s.spaceAfter() || s.flow > 0 && isFlowIndicator(d[s.i+1])) {
			return
		}
	}
}
