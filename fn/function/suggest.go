package function

import (
	"sort"
	"strings"
)

// fieldsAt lists the fields the schema allows in the object at a JSON pointer of the typed
// form ("/spec/service"), sorted; nil where the schema names none (a free map such as
// sparkConf, or a pointer the schema does not reach).
func fieldsAt(pointer string) []string {
	s := parsedSchema()
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if items, ok := s["items"].(map[string]any); ok && s["type"] == "array" {
			s = items // an index into a list
			continue
		}
		props, _ := s["properties"].(map[string]any)
		next, ok := props[tok].(map[string]any)
		if !ok {
			return nil
		}
		s = next
	}
	props, _ := s["properties"].(map[string]any)
	return sortedKeys(props)
}

// nearest is the candidate a mistyped name most likely meant: the closest by edit distance,
// case ignored, when it is close enough to be a typo (at most a third of the longer name, and
// at least 1); "" otherwise.
func nearest(name string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(name), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	longer := len(name)
	if len(best) > longer {
		longer = len(best)
	}
	limit := longer / 3
	if limit < 1 {
		limit = 1
	}
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// editDistance is the optimal-string-alignment distance of a and b: insertions, deletions,
// substitutions and swaps of neighbours ("prot" for "port") count one each. Bytes: field names
// are ASCII.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// unknownFieldsMessage says, for unknown fields of the object at pointer, what each most
// likely meant and which fields the object takes.
func unknownFieldsMessage(pointer string, unknown []string) string {
	valid := fieldsAt(pointer)
	msg := "unknown field"
	if len(unknown) > 1 {
		msg = "unknown fields"
	}
	var hints []string
	for _, u := range unknown {
		if n := nearest(u, valid); n != "" {
			hints = append(hints, u+" → "+n)
		}
	}
	switch {
	case len(hints) == 1 && len(unknown) == 1:
		msg += "; did you mean " + strings.TrimPrefix(hints[0], unknown[0]+" → ") + "?"
	case len(hints) > 0:
		msg += "; did you mean " + strings.Join(hints, ", ") + "?"
	}
	if len(hints) == 0 {
		msg += "."
	}
	if len(valid) > 0 {
		msg += " Valid fields here: " + strings.Join(valid, ", ")
	}
	return msg
}

// unknownKeyMessage is the same for a key of the ConfigMap form.
func unknownKeyMessage(key string) string {
	known := knownKeys()
	msg := "unknown key"
	if n := nearest(key, known); n != "" {
		msg += "; did you mean " + n + "?"
	} else if strings.HasPrefix(strings.ToLower(key), "spark") {
		msg += "; Spark properties start with \"spark.\"."
	} else {
		msg += "."
	}
	sort.Strings(known)
	return msg + " Known keys: " + strings.Join(known, ", ") + ", and spark.* properties"
}
