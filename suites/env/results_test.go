package env

import (
	"testing"
	"time"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
)

func TestResultLineRoundTrip(t *testing.T) {
	r := reports.Result{ID: "seccomp/kubelet/enforce", Node: "w1", Verdict: skew.Flaky, Failure: "first attempt:\nboom", Duration: 3 * time.Second}
	line := ResultLine(r)
	back, ok := ParseResultLine("noise before it " + line)
	if !ok || back != r {
		t.Errorf("round trip of %q: %+v, %v; want %+v", line, back, ok, r)
	}
	for _, other := range []string{"", "a log line", ResultLinePrefix + "{not json"} {
		if _, ok := ParseResultLine(other); ok {
			t.Errorf("%q read as a result line", other)
		}
	}
}
