package sparkconf

import (
	"errors"
	"regexp"
	"strings"
)

// DefaultRedactionRegex is spark.redaction.regex's default: core's
// internal/config/package.scala SECRET_REDACTION_PATTERN.
const DefaultRedactionRegex = `(?i)secret|password|token|access[.]?key`

// ErrJavaOnlyRegex is a spark.redaction.regex that uses a construct of java.util.regex.Pattern
// Go's RE2 does not have (lookaround, back-references, possessive or atomic groups, class
// intersections, the x/d/U flags): Spark accepts it, sparkui cannot tell what it matches.
var ErrJavaOnlyRegex = errors.New("uses a Java regular-expression construct sparkui cannot evaluate")

// javaOnly are constructs java.util.regex.Pattern accepts that RE2 refuses or reads
// differently ("&&" inside a class is an intersection in Java, two '&' characters in Go).
var javaOnly = regexp.MustCompile(`\(\?<?[=!]|\(\?>|\\[1-9]|\\k<|[*+?}]\+|&&|\(\?[a-zA-Z]*[xdU]|\\[ZhHvVRX]|\\p\{(java|Is|In)`)

// CompileRedaction compiles a spark.redaction.regex value for Utils.redact's findFirstIn
// (core's util/Utils.scala: a key or value the pattern finds anywhere is redacted). Java and
// Go agree on the syntax of the default and of the usual alternations of words, flags (?i),
// classes and quantifiers; anything Java-only is ErrJavaOnlyRegex, anything neither accepts
// is the compiler's error (Spark refuses it at start: SparkConf's regexConf throws).
func CompileRedaction(expr string) (*regexp.Regexp, error) {
	if m := javaOnly.FindString(expr); m != "" {
		return nil, ErrJavaOnlyRegex
	}
	// Java's (?u) (Unicode-aware case folding) is what Go's (?i) already does.
	re, err := regexp.Compile(strings.ReplaceAll(expr, "(?iu)", "(?i)"))
	if err != nil {
		return nil, err
	}
	return re, nil
}

// RedactionRegex is the effective spark.redaction.regex of props.
func RedactionRegex(props map[string]string) string {
	if v, ok := props[KeyRedactionRegex]; ok {
		return v
	}
	return DefaultRedactionRegex
}

// Redacted reports whether Spark's /environment shows key's value as "*********(redacted)":
// Utils.redact replaces the value when the pattern is found in the key or in the value.
func Redacted(re *regexp.Regexp, key, value string) bool {
	return re.MatchString(key) || re.MatchString(value)
}
