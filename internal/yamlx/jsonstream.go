package yamlx

import (
	"bytes"
	"encoding/json"
	"io"
)

// JSONDoc is one value of a JSON stream and the line it starts on.
type JSONDoc struct {
	Text []byte
	Line int
}

// JSONStream splits a stream of several JSON objects (JSON lines, or pretty-printed objects
// one after another, as `jq -c` and many exporters write) into its values. A YAML decoder
// reads such a stream as one flow mapping and ignores the rest, which lost every object after
// the first. ok is false unless data is two or more JSON objects and nothing else.
func JSONStream(data []byte) (docs []JSONDoc, ok bool) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			break
		}
		if err != nil || len(raw) == 0 || raw[0] != '{' {
			return nil, false
		}
		end := int(dec.InputOffset())
		start := end - len(raw)
		docs = append(docs, JSONDoc{Text: raw, Line: 1 + bytes.Count(data[:start], []byte("\n"))})
	}
	if len(docs) < 2 {
		return nil, false
	}
	return docs, true
}
