package reports

import (
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
)

// UpgradeNote says whether the control plane can run ahead of the kubelets
// for the whole of an upgrade from one version to another (the note of
// WriteUpgrade).
func UpgradeNote(from, to *version.Version) string {
	if err := release.CheckSkew(to, from); err != nil {
		last := release.Minor{Major: release.MinorOf(from).Major, Minor: release.MinorOf(from).Minor + release.MaxKubeletSkew(to)}
		return fmt.Sprintf("Kubelets at v%s cannot stay behind a v%s control plane (the skew policy allows %d minors): upgrade in steps, and upgrade the kubelets before the control plane goes past v%s.",
			from, to, release.MaxKubeletSkew(to), last)
	}
	return fmt.Sprintf("Kubelets at v%s may stay behind a v%s control plane while it is upgraded; run 'skewproof simulate --apiserver %s --kubelet %s' for that state.", from, to, to, from)
}

// HostFlags returns the flags of 'skewproof simulate' that give the host
// facts h, each with a leading space; empty for the default host.
func HostFlags(h skew.HostFacts) string {
	s := ""
	if !h.AppArmor {
		s += " --apparmor off"
	}
	if !h.Seccomp {
		s += " --seccomp off"
	}
	return s + RuntimeFlag(h)
}

// RuntimeFlag is the --runtime flag of 'skewproof simulate' that gives the
// runtime facts of h, with a leading space; empty for the default runtime.
func RuntimeFlag(h skew.HostFacts) string {
	if rt := skew.FormatRuntime(h); rt != skew.FormatRuntime(skew.DefaultHost) {
		return " --runtime " + ShellQuote(rt)
	}
	return ""
}

// ShellQuote quotes s for a POSIX shell where it needs quoting.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeRuntimeNotResearched lists, after a simulation, the rules whose
// outcome on the node's container runtime was not researched, so they are
// judged against the KEP alone (skew.Expectation.RuntimeNotResearched):
// the heading once, then one line per rule (format: id, reason).
func writeRuntimeNotResearched(w io.Writer, es []skew.Expectation, heading, format string) {
	first := true
	for _, e := range es {
		if e.RuntimeNotResearched == "" {
			continue
		}
		if first {
			fmt.Fprint(w, heading)
			first = false
		}
		fmt.Fprintf(w, format, e.ID, e.RuntimeNotResearched)
	}
}
