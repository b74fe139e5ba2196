package skew

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/skew/release"
)

// HistoryPreset is the name of the preset matrix of the annotation eras
// (`skewproof run --matrix history`).
const HistoryPreset = "history"

// historyLeg is one cluster of the history preset, by minors.
type historyLeg struct {
	apiserver string
	kubelets  []string
}

// historyLegs are the clusters of the annotation eras: seccomp's (the API
// server copied field and annotation v1.19 to v1.26, kubelets read the
// annotations until v1.24) and AppArmor's (the v1.30 API server copies the
// fields to the annotations that the kubelets before v1.30 read). Together
// they put a cluster on both sides of every minor where an upstream window
// of a rule changes, up to the end of each era (HistoryChanges;
// TestHistoryCoversEveryChange). Each leg stays within its era's skew
// policy, and a kubelet older than its API server is there because a
// change at that kubelet minor needs it; the others run the API server's
// own kubelet, which costs no build of its own.
var historyLegs = []historyLeg{
	{"1.20", []string{"1.19", "1.20"}}, // kubelet 1.19|1.20: an updated annotation applied on restart
	{"1.21", []string{"1.21"}},         // API server 1.20|1.21: batch/v1 CronJob
	{"1.22", []string{"1.22"}},         // API server 1.21|1.22: the annotation warnings begin
	{"1.23", []string{"1.22", "1.23"}}, // 1.22|1.23 both: ephemeral containers on by default, warning text
	{"1.24", []string{"1.24"}},         // API server 1.24|1.25: the field-to-annotation copy stops
	{"1.25", []string{"1.25"}},
	// KEP-135's promise: fields enforced on a kubelet that reads only annotations.
	{"1.26", []string{"1.24", "1.26"}}, // API server 1.26|1.27: the annotation-to-field copy stops
	{"1.27", []string{"1.25", "1.27"}},
	{"1.29", []string{"1.29"}}, // API server 1.29|1.30: the appArmorProfile fields
	// KEP-24's promise: the v1.30 API server copies fields to the
	// annotations that a v1.29 kubelet reads.
	{"1.30", []string{"1.29", "1.30"}}, // API server and kubelet 1.29|1.30: the appArmorProfile fields
	{"1.31", []string{"1.30", "1.31"}}, // API server and kubelet 1.30|1.31: GA, admission rejects
}

// historyControlPlanes pins, per minor, the patch of a leg's control plane
// where the newest served one does not build from what the Go module proxy
// serves (docs/clusters/README.md): v1.25.16's kube-controller-manager
// needs k8s.io/controller-manager of v1.25, which the proxy serves only as
// v0.25.6, older than k8s.io/apiserver v0.25.16's WithAuthentication
// (five arguments, v0.25.6 passes four); v1.25.6's own apiserver takes
// four. The oracle's v1.25 answers come from v1.25.16's sources; a
// kubelet of the minor stays the newest (v1.25.16's builds).
var historyControlPlanes = map[string]string{"1.25": "1.25.6"}

// HistoryPinned lists the versions historyControlPlanes pins: the caller
// asks the proxy for them by exact version (served.Check) and adds them to
// the served list it gives History.
func HistoryPinned() []*version.Version {
	var out []*version.Version
	for _, v := range historyControlPlanes {
		out = append(out, release.MustParseVersion(v))
	}
	return out
}

// historyEraEnds are the minors from which a family's migration is over:
// seccomp's annotations stopped working in v1.27 (KEP-135 §Version Skew
// Strategy), AppArmor's fields are GA and the annotations deprecated from
// v1.31 (KEP-24 §Removing annotation support, Phase 2). Changes at or before
// the end are the preset's; later ones are the default matrix's.
var historyEraEnds = map[string]release.Minor{"seccomp": {Major: 1, Minor: 27}, "apparmor": {Major: 1, Minor: 31}}

// History plans the clusters of the history preset, each version at the
// newest served patch of its minor. Each cluster lists the suites whose
// rules were read at every one of its versions (Cluster.Suites): the
// oracle answers only where the sources were read, and a suite outside
// them would judge nothing.
func History(served []*version.Version) ([]release.Cluster, error) {
	var out []release.Cluster
	newest := func(s string) (string, error) {
		v := release.NewestServed(served, release.MustParseMinor(s))
		if v == nil {
			return "", fmt.Errorf("history: no served release of kubernetes v%s; served releases: %s", s, release.JoinVersions(served))
		}
		return v.String(), nil
	}
	for _, l := range historyLegs {
		a, err := newest(l.apiserver)
		if err != nil {
			return nil, err
		}
		if pin, ok := historyControlPlanes[l.apiserver]; ok {
			if !slices.ContainsFunc(served, func(v *version.Version) bool { return v.Equal(release.MustParseVersion(pin)) }) {
				return nil, fmt.Errorf("history: kubernetes v%s (the v%s control plane that builds) is not served", pin, l.apiserver)
			}
			a = pin
		}
		c := release.Cluster{Apiserver: a}
		for _, k := range l.kubelets {
			v, err := newest(k)
			if err != nil {
				return nil, err
			}
			if k == l.apiserver {
				v = a // the control plane's own kubelet (pinned or not)
			}
			c.Kubelets = append(c.Kubelets, v)
		}
		c.Suites = FamiliesRead(append([]string{l.apiserver}, l.kubelets...))
		out = append(out, c)
	}
	return out, nil
}

// HistoryMinors lists the minors of every version of the history preset.
func HistoryMinors() []release.Minor {
	var out []release.Minor
	for _, l := range historyLegs {
		for _, s := range append([]string{l.apiserver}, l.kubelets...) {
			if m := release.MustParseMinor(s); !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// FamiliesRead lists the rule families ("seccomp", "apparmor") whose
// rules' sources were read at every one of the minors.
func FamiliesRead(minors []string) []string {
	var out []string
	for _, r := range Rules() {
		f := Family(r.ID)
		if slices.Contains(out, f) {
			continue
		}
		read := r.Read.Window()
		if !slices.ContainsFunc(minors, func(m string) bool { return !read.ContainsMinor(release.MustParseMinor(m)) }) {
			out = append(out, f)
		}
	}
	return out
}

// Family is the family of a rule id: its first path element.
func Family(id string) string {
	f, _, _ := strings.Cut(id, "/")
	return f
}

// WindowChange is a minor where an upstream window of a rule changes, at the
// component whose version selects the rule's upstream phase.
type WindowChange struct {
	ID        string
	Component Component
	At        release.Minor
}

// HistoryChanges lists the changes of the rules' upstream windows within
// the releases read for them, up to the end of their family's era
// (historyEraEnds), whose minor before is read too: the places the history
// preset must observe on both sides.
func HistoryChanges() []WindowChange {
	var out []WindowChange
	for _, r := range Rules() {
		end, ok := historyEraEnds[Family(r.ID)]
		if !ok || r.SameAs != "" {
			continue
		}
		c := r.Component
		if r.UpstreamAt != "" {
			c = r.UpstreamAt
		}
		read := r.Read.Window()
		for _, p := range r.Upstream {
			m := p.Window.From
			before := release.Minor{Major: m.Major, Minor: m.Minor - 1}
			if p.Window.OpenStart() || end.Less(m) || !read.ContainsMinor(m) || !read.ContainsMinor(before) {
				continue
			}
			out = append(out, WindowChange{ID: r.ID, Component: c, At: m})
		}
	}
	return out
}
