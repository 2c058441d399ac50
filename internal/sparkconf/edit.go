package sparkconf

import "strings"

// Set makes key's value in the java.util.Properties text value, and reports whether the text
// changed. When the text already reads key as value it is returned as it is (so a rerun
// changes nothing); otherwise every logical line of key goes and one line key=value is
// appended, escaped as Properties.store writes it (spark-submit's own spark.properties
// escapes ':' and '=' the same way). An empty value deletes the key. text must parse.
func Set(text, key, value string) (string, bool) {
	props, err := Parse(text)
	if err != nil {
		return text, false
	}
	if cur, ok := props[key]; (ok && cur == value) || (!ok && value == "") {
		return text, false
	}
	var b strings.Builder
	lines := splitLines(text)
	for i := 0; i < len(lines); i++ {
		start := i
		line := trimLeadingSpace(lines[i])
		logical := line
		for !(line == "" || line[0] == '#' || line[0] == '!') && endsInOddBackslashes(line) && i+1 < len(lines) {
			i++
			line = trimLeadingSpace(lines[i])
			logical = logical[:len(logical)-1] + line
		}
		if logical != "" && logical[0] != '#' && logical[0] != '!' {
			if k, _, err := splitKeyValue(logical); err == nil && k == key {
				continue
			}
		}
		for _, l := range lines[start : i+1] {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	if value != "" {
		b.WriteString(storeEscape(key, true) + "=" + storeEscape(value, false) + "\n")
	}
	return b.String(), true
}

// storeEscape is Properties.saveConvert: backslash, the separators and comment characters, and
// (in a key, or leading in a value) spaces.
func storeEscape(s string, key bool) string {
	var b strings.Builder
	for i, c := range s {
		switch c {
		case '\\', '=', ':', '#', '!':
			b.WriteByte('\\')
			b.WriteRune(c)
		case ' ':
			if key || i == 0 {
				b.WriteByte('\\')
			}
			b.WriteRune(c)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}
