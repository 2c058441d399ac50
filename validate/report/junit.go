package report

import (
	"encoding/xml"
	"io"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	File     string      `xml:"file,attr,omitempty"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr,omitempty"`
	Line      int           `xml:"line,attr,omitempty"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes a test suite per file and a test case per object and rule: the case fails
// when the rule found an error on the object; warnings and info go to its system-out.
// Findings placed on no object, or of a rule not in the catalog, get a suite of their own.
func WriteJUnit(w io.Writer, rep *Report) error {
	type key struct {
		obj  *Object
		rule string
	}
	byCase := map[key][]*Finding{}
	var orphans []*Finding
	for _, f := range rep.Findings {
		if f.Object == nil || f.Object.File == "" || f.RuleIndex < 0 {
			orphans = append(orphans, f)
			continue
		}
		k := key{f.Object, f.Rule}
		byCase[k] = append(byCase[k], f)
	}
	out := junitSuites{Name: "sparkui-fn validate", Time: "0"}
	mkCase := func(name, class string, fs []*Finding) junitCase {
		c := junitCase{Name: name, Classname: class, Time: "0"}
		var failText, other []string
		for _, f := range fs {
			where := f.Place()
			if p := f.field(); p != "" {
				where += " " + p
			}
			line := oneLine(f.Result.Message) + " (" + where + ")"
			if f.Result.Severity == framework.Error {
				if c.Failure == nil {
					c.Failure = &junitFailure{Message: oneLine(f.Result.Message), Type: f.Rule}
					c.File, c.Line = f.File, f.Line
				}
				failText = append(failText, line)
			} else {
				other = append(other, string(f.Result.Severity)+": "+line)
			}
		}
		if c.Failure != nil {
			c.Failure.Text = strings.Join(failText, "\n")
		}
		c.SystemOut = strings.Join(other, "\n")
		return c
	}
	byFile := map[string][]*Object{}
	for _, o := range rep.Objects {
		byFile[o.File] = append(byFile[o.File], o)
	}
	addSuite := func(s junitSuite) {
		for _, c := range s.Cases {
			s.Tests++
			if c.Failure != nil {
				s.Failures++
			}
		}
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Suites = append(out.Suites, s)
	}
	for _, file := range rep.Files {
		s := junitSuite{Name: file, File: file, Time: "0"}
		for _, o := range byFile[file] {
			for _, r := range rep.Rules {
				fs := byCase[key{o, r.ID}]
				// A rule raised outside the model has a case only where it found something.
				if !r.Checked && len(fs) == 0 {
					continue
				}
				c := mkCase(r.ID+" "+r.Title, o.ID(), fs)
				if c.File == "" {
					c.File, c.Line = o.File, o.Line
				}
				s.Cases = append(s.Cases, c)
			}
		}
		addSuite(s)
	}
	if len(orphans) > 0 {
		s := junitSuite{Name: "sparkui-fn", Time: "0"}
		for _, f := range orphans {
			s.Cases = append(s.Cases, mkCase(f.Rule, f.Subject(), []*Finding{f}))
		}
		addSuite(s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
