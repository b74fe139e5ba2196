package skew

import (
	"fmt"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/skew/release"
)

// SourcesRead lists the releases of k8s.io/kubernetes whose sources a rule's
// upstream phases were read in: one patch release per minor, oldest first,
// without a gap. A rule answers only inside them: for a version outside
// (a minor older than the first or newer than the last) its verdict is skip,
// "not researched", never pass or deviation. An open end of a phase window
// says what the KEP plans or what the read releases do, not what an unread
// release does. A patch release other than the one read is taken to behave
// like it (the oracle's windows are minors).
type SourcesRead []string

// Window is the minors the releases cover, [first, last+1).
func (s SourcesRead) Window() release.Window {
	if len(s) == 0 {
		// Nothing read: an empty window (From == Until) contains no minor.
		return release.Window{From: release.Minor{Major: 1, Minor: 0}, Until: release.Minor{Major: 1, Minor: 0}}
	}
	first, last := release.MinorOf(release.MustParseVersion(s[0])), release.MinorOf(release.MustParseVersion(s[len(s)-1]))
	return release.Window{From: first, Until: release.Minor{Major: last.Major, Minor: last.Minor + 1}}
}

// String renders the range, e.g. "v1.19.16 … v1.37.2".
func (s SourcesRead) String() string {
	switch len(s) {
	case 0:
		return "none"
	case 1:
		return "v" + s[0]
	}
	return "v" + s[0] + " … v" + s[len(s)-1]
}

// List renders every release, e.g. "v1.29.6, v1.30.14, …".
func (s SourcesRead) List() string {
	out := make([]string, len(s))
	for i, r := range s {
		out[i] = "v" + r
	}
	return strings.Join(out, ", ")
}

// Releases of k8s.io/kubernetes read for each family of rules. The Go module
// proxy serves each of them by exact version (go mod download
// k8s.io/kubernetes@vX.Y.Z), even those 'go list -m -versions' does not list.
var (
	// seccompRead: every minor since the seccomp fields exist (v1.19). The
	// files and functions read are in the header of rules_seccomp.go.
	seccompRead = SourcesRead{"1.19.16", "1.20.15", "1.21.14", "1.22.17", "1.23.17", "1.24.17", "1.25.16", "1.26.15",
		"1.27.16", "1.28.15", "1.29.6", "1.30.14", "1.31.14", "1.32.13", "1.33.13", "1.34.4", "1.35.4", "1.36.3", "1.37.2"}
	// appArmorRead: the releases skewproof serves and builds (the fields
	// exist from v1.30; v1.29 is the last release of annotations only). The
	// files and functions read are in the header of rules_apparmor.go.
	appArmorRead = SourcesRead{"1.29.6", "1.30.14", "1.31.14", "1.32.13", "1.33.13", "1.34.4", "1.35.4", "1.36.3", "1.37.2"}
)

// notResearched says why the rule cannot answer for this pair, or "". An
// apiserver rule needs the kube-apiserver's minor among the releases read; a
// kubelet rule needs the kubelet's and the kube-apiserver's, since its pods
// pass the API server's create path (defaulting, validation, field and
// annotation sync) before the kubelet runs them.
func (r *Rule) notResearched(apiserver, kubelet *version.Version) string {
	w := r.Read.Window()
	checks := []struct {
		name string
		v    *version.Version
	}{{"kube-apiserver", apiserver}}
	if r.Component == Kubelet {
		checks = append([]struct {
			name string
			v    *version.Version
		}{{"kubelet", kubelet}}, checks...)
	}
	for _, c := range checks {
		if !w.Contains(c.v) {
			return fmt.Sprintf("not researched at %s v%s (sources read: %s)", c.name, c.v, r.Read)
		}
	}
	return ""
}
