package reports

import (
	"fmt"

	"github.com/skewproof/skewproof/skew"
)

// CertificationFailure is the Reason of a result a certification run
// failed because it was skipped for something other than a fact of the
// release.
const CertificationFailure = "certification: applies here but was not judged"

// Certify judges results as a certification run does: every catalogue id
// that applies to a node's versions and runtime must be judged there. A
// skip for a fact of the release (SkipRelease) stands; any other skip (a
// host without AppArmor, a cluster without node access, a feature gate's
// setting) becomes a failure with the reason and the remedy, so that JUnit
// readers see it. A skip for want of skewproof's reading of the release
// is already not green (NotResearched) and stays a skip.
func Certify(rs []Result) []Result {
	out := make([]Result, len(rs))
	for i, r := range rs {
		if r.Verdict == skew.Skip && r.SkipKind != SkipRelease && r.NotResearched == "" {
			why := r.Reason
			r.Verdict, r.Reason = skew.Fail, CertificationFailure
			r.Failure = fmt.Sprintf("%s on %s applies to its versions and runtime but was skipped (%s): %s; remedy: %s",
				r.ID, where(r.Node), kindOf(r.SkipKind), why, remedy(r.SkipKind))
		}
		out[i] = r
	}
	return out
}

// CertifiedGreen says whether the results of a certification run are
// green: green (Green, no flake tolerated), and no skip but for a fact of
// the release.
func CertifiedGreen(rs []Result) (bool, string) {
	if !Green(rs, false) {
		return false, "not every spec passed"
	}
	for _, r := range rs {
		if r.Verdict == skew.Skip && r.SkipKind != SkipRelease {
			return false, fmt.Sprintf("%s on %s was skipped (%s): %s", r.ID, where(r.Node), kindOf(r.SkipKind), r.Reason)
		}
	}
	return true, ""
}

func where(node string) string {
	if node == "" {
		return "the cluster"
	}
	return "node " + node
}

func kindOf(kind string) string {
	switch kind {
	case SkipHost:
		return "a fact of the node's host, not of the release"
	case SkipRelease:
		return "a fact of the release"
	}
	return "a fact of this cluster, not of the release"
}

func remedy(kind string) string {
	if kind == SkipHost {
		return "run on nodes whose kernel has what the rule needs; on a host without AppArmor, a new cluster of 'skewproof run' gets nodes that enforce it (--apparmor-node auto, the default, or all: User-Mode Linux)"
	}
	return "give the run what the spec needs (the reason names it), e.g. node access (a cluster skewproof brings up has it), or certify on a cluster skewproof brings up"
}
