package env

import (
	"encoding/json"
	"strings"

	"github.com/skewproof/skewproof/reports"
)

// ResultLine is the line a suite process prints for a finished spec.
func ResultLine(r reports.Result) string {
	b, _ := json.Marshal(r)
	return ResultLinePrefix + string(b)
}

// ParseResultLine reads a result line (ResultLine) out of a line of a
// suite process's output; ok is false for any other line.
func ParseResultLine(line string) (r reports.Result, ok bool) {
	i := strings.Index(line, ResultLinePrefix)
	if i < 0 {
		return r, false
	}
	if err := json.Unmarshal([]byte(line[i+len(ResultLinePrefix):]), &r); err != nil {
		return reports.Result{}, false
	}
	return r, true
}
