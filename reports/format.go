package reports

import (
	"fmt"
	"strings"
)

// Format is an output format of a command's --format flag. Each format has
// one spelling, whichever command takes it.
type Format string

// The output formats.
const (
	Text     Format = "text"
	JSON     Format = "json"
	Markdown Format = "markdown"
	// GitHub is a GitHub Actions strategy matrix (JSON with "include").
	GitHub Format = "github"
)

// The formats each renderer writes: OracleFormats for the oracle's answers
// (WriteSimulation, WriteUpgrade, WriteDeviations), MatrixFormats for a
// cluster plan (WriteMatrix).
var (
	OracleFormats = []Format{Text, JSON, Markdown}
	MatrixFormats = []Format{Text, JSON, GitHub}
)

// ParseFormat returns s as one of the formats a command takes, or an error
// naming them ("unknown --format "md"; use text, json or markdown").
func ParseFormat(s string, takes ...Format) (Format, error) {
	for _, f := range takes {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown --format %q; use %s", s, FormatList(takes...))
}

// FormatList is "text, json or markdown".
func FormatList(fs ...Format) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// errFormat is a renderer's answer to a format it does not write.
func errFormat(f Format, takes ...Format) error {
	_, err := ParseFormat(string(f), takes...)
	return err
}
