package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/skewproof/skewproof/skew"
)

// EntryName is the name of the Ginkgo report entry in which a spec records
// its Result (as JSON).
const EntryName = "skewproof"

// EntryJSON returns the JSON of a spec's Result entry, in-process or after
// the report crossed a process boundary (Ginkgo parallel runs).
func entryJSON(e types.ReportEntry) string {
	if raw := e.Value.GetRawValue(); raw != nil {
		switch v := raw.(type) {
		case string:
			return v
		default:
			b, _ := json.Marshal(v)
			return string(b)
		}
	}
	if e.Value.AsJSON != "" {
		var s string
		if json.Unmarshal([]byte(e.Value.AsJSON), &s) == nil {
			return s
		}
		return e.Value.AsJSON
	}
	return e.Value.Representation
}

// ReadGinkgoReport reads the report of the one suite that a Ginkgo JSON
// report (-ginkgo.json-report) holds.
func ReadGinkgoReport(path string) (types.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return types.Report{}, err
	}
	var rs []types.Report
	if err := json.Unmarshal(b, &rs); err != nil {
		return types.Report{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(rs) != 1 {
		return types.Report{}, fmt.Errorf("%s: %d suites, want one", path, len(rs))
	}
	return rs[0], nil
}

// FromSpec turns a Ginkgo spec report into a Result. ok is false for specs
// that did not run (filtered out by labels or focus).
func FromSpec(s types.SpecReport) (r Result, ok bool) {
	if s.LeafNodeType != types.NodeTypeIt || s.StartTime.IsZero() {
		return Result{}, false
	}
	// Specs left out by a label filter or focus are "skipped" without a
	// message and without entries: they did not run.
	if s.State == types.SpecStateSkipped && s.Failure.Message == "" && len(s.ReportEntries) == 0 {
		return Result{}, false
	}
	r.Name = s.FullText()
	r.Duration = s.RunTime
	for _, e := range s.ReportEntries {
		if e.Name == EntryName {
			// The last entry is the spec's own word; entries of earlier
			// attempts (Ginkgo keeps them on a retry) must not leak into it.
			r = Result{}
			_ = json.Unmarshal([]byte(entryJSON(e)), &r)
			r.Name, r.Duration = s.FullText(), s.RunTime
		}
	}
	earlier := earlierAttempts(s)
	switch s.State {
	case types.SpecStatePassed:
		switch {
		case r.Verdict == "" || r.Verdict == skew.Skip || r.Verdict == skew.Fail:
			// A body that returned without judging (or whose last word
			// contradicts its state) observed nothing that can be
			// certified: a failure of the spec, never a pass.
			r.Failure = fmt.Sprintf("the spec returned without a verdict (recorded %q): nothing was judged", r.Verdict)
			r.Verdict = skew.Fail
		case s.NumAttempts > 1:
			// Passed on a retry (--flake-attempts): flaky, never a plain
			// pass; the failure of the earlier attempt is kept.
			r.Reason = strings.TrimSpace(fmt.Sprintf("%s on attempt %d of %d after a failure; %s", r.Verdict, s.NumAttempts, s.NumAttempts, r.Reason))
			r.Verdict, r.Failure = skew.Flaky, strings.Join(earlier, "\n")
		}
	case types.SpecStateSkipped, types.SpecStatePending:
		if r.Reason == "" {
			r.Reason = s.Failure.Message
		}
		if len(earlier) > 0 {
			// Failed, then skipped on the retry: the failure stands (a
			// skip proves nothing about the attempt that failed).
			r.Verdict = skew.Fail
			r.Failure = strings.TrimSpace(fmt.Sprintf("%s\nthen skipped on attempt %d of %d: %s", strings.Join(earlier, "\n"), s.NumAttempts, s.NumAttempts, r.Reason))
			break
		}
		r.Verdict = skew.Skip
	case types.SpecStateInterrupted:
		// Stopped before it finished, by Ginkgo's timeout (--timeout) or
		// SIGINT/SIGTERM: nothing was judged, and a skip would read as
		// green to a JUnit reader. A failure, with what stopped it.
		r.Verdict = skew.Fail
		r.Reason = "interrupted before it finished: no verdict"
		r.Failure = strings.TrimSpace("[interrupted] " + s.Failure.Message)
	default: // failed, panicked, aborted, timed out
		r.Verdict = skew.Fail
		msg := s.Failure.Message
		if s.Failure.Location.FileName != "" {
			msg += fmt.Sprintf("\n%s:%d", s.Failure.Location.FileName, s.Failure.Location.LineNumber)
		}
		r.Failure = strings.TrimSpace(fmt.Sprintf("[%s] %s", s.State, msg))
	}
	if r.ID == "" {
		r.ID = idFromText(r.Name)
	}
	return r, true
}

// UnreportedReason is the Reason of a planned spec that never reported.
const UnreportedReason = "never reported: no verdict"

// Unreported is the result of a spec the run planned (a dry run listed it
// for a suite process) that never reported one: its process was killed,
// timed out or crashed outside it. A failure: nothing was judged, and a
// JUnit reader must see it. why says how the process ended.
func Unreported(text, node, why string) Result {
	return Result{Name: text, ID: idFromText(text), Node: node, Verdict: skew.Fail, Reason: UnreportedReason,
		Failure: "planned but never reported: " + why}
}

// earlierAttempts are the failures Ginkgo kept from the attempts before the
// last one (--flake-attempts), in order.
func earlierAttempts(s types.SpecReport) []string {
	if s.NumAttempts < 2 {
		return nil
	}
	var out []string
	for _, f := range s.AdditionalFailures {
		if m := strings.TrimSpace(f.Failure.Message); strings.HasPrefix(m, "Failure recorded during attempt") {
			out = append(out, m)
		}
	}
	return out
}

// idFromText extracts the catalogue id from "[seccomp/x/y] ..." spec text.
func idFromText(text string) string {
	i := strings.Index(text, "[")
	for i >= 0 {
		j := strings.Index(text[i:], "]")
		if j < 0 {
			break
		}
		cand := text[i+1 : i+j]
		if strings.Count(cand, "/") >= 2 && !strings.ContainsAny(cand, " :") {
			return cand
		}
		next := strings.Index(text[i+j:], "[")
		if next < 0 {
			break
		}
		i = i + j + next
	}
	return ""
}

// FromGinkgo turns a whole Ginkgo report into a Suite.
func FromGinkgo(rep types.Report, name, cluster string) Suite {
	s := Suite{Name: name, Cluster: cluster, Timestamp: rep.StartTime}
	for _, sp := range rep.SpecReports {
		if r, ok := FromSpec(sp); ok {
			s.Results = append(s.Results, r)
		}
	}
	return s
}

// ProgressLine renders one finished spec for live progress.
func ProgressLine(r Result) string {
	where := r.Node
	if where == "" {
		where = "cluster"
	}
	line := fmt.Sprintf("%-9s %-44s %-22s %6.1fs", VerdictLabel(r), r.ID, where, r.Duration.Seconds())
	switch r.Verdict {
	case skew.Fail:
		line += "  " + FirstLine(r.Failure)
	case skew.Skip, skew.Flaky:
		line += "  " + r.Reason
	case skew.Deviation:
		line += "  " + r.Outcome
	default:
		if r.Outcome != "" {
			line += "  " + r.Outcome
		}
	}
	return line
}
