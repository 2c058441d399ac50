package report

import (
	"fmt"
	"io"
)

// WriteText writes one line per finding: file:line: severity: message (Kind ns/name field).
func WriteText(w io.Writer, rep *Report) error {
	for _, f := range rep.Findings {
		line := fmt.Sprintf("%s: %s: %s", f.Place(), f.Result.Severity, oneLine(f.Result.Message))
		if s := f.Subject(); s != "" {
			line += " (" + s + ")"
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
