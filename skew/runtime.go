package skew

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/skew/release"
)

// Container runtimes. The kubelet hands a pod's seccomp and AppArmor
// profiles to the CRI runtime (containerd, CRI-O), which writes them into
// the OCI spec (or refuses) and runs an OCI runtime (runc, crun) that
// applies them (or refuses). Where the sources read say the outcome of a
// rule differs between runtimes, the rule lists its RuntimeVariants: the
// upstream phases per runtime window, each with the runtime's source. A
// rule without variants does not depend on the runtime in the oracle.

// Names of the runtimes whose sources were read: the CRI runtime names as
// node.status.nodeInfo.containerRuntimeVersion gives them, and the OCI
// runtime names.
const (
	Containerd = "containerd"
	CRIO       = "cri-o"
	Runc       = "runc"
	Crun       = "crun"
)

// RuntimesRead lists, per runtime, the releases whose sources the runtime
// variants were read in (the research behind docs/runtimes.md): Go module
// proxy sources for containerd, CRI-O (with containers/common v0.63.0, the
// version its go.mod requires) and runc; the Debian trixie source tarball
// for crun 1.21. Debian trixie's containerd 1.7.24~ds1 and runc 1.1.15+ds1
// (skewproof's node images) were compared with the proxy sources: the files
// cited are the same. A release other than the one read in the same minor
// is taken to behave like it; any other release is not researched.
var RuntimesRead = map[string][]string{
	Containerd: {"1.7.24", "2.4.2"},
	CRIO:       {"1.34.0"},
	Runc:       {"1.1.15", "1.5.2"},
	Crun:       {"1.21"},
}

// RuntimeWindow selects nodes by container runtime: the CRI runtime's name
// and a window of its minors, and, where the OCI runtime takes part in the
// outcome, the OCI runtime's name and a window of its minors. An empty
// OCIRuntime means the CRI runtime decides before any OCI runtime runs, so
// the OCI runtime does not matter. Windows are minors ("1.7" is every
// 1.7.x), the same type as the Kubernetes windows.
type RuntimeWindow struct {
	Runtime     string         `json:"runtime"`
	Versions    release.Window `json:"versions"`
	OCIRuntime  string         `json:"ociRuntime,omitempty"`
	OCIVersions release.Window `json:"ociVersions,omitempty"`
}

// RuntimeVariant is the upstream behaviour of a rule on the runtimes of
// Match.
type RuntimeVariant struct {
	Match RuntimeWindow `json:"match"`
	// Source cites the runtime's code the variant was read in:
	// module@version, file, function.
	Source string `json:"source"`
	// Upstream replaces the rule's upstream phases on these runtimes; nil
	// means the rule's own upstream phases, read for these runtimes too.
	Upstream []Phase `json:"upstream,omitempty"`
}

func (v RuntimeVariant) phases(r *Rule) []Phase {
	if v.Upstream == nil {
		return r.Upstream
	}
	return v.Upstream
}

// String renders the window, e.g. "containerd v1.7 only with runc v1.1 only".
func (w RuntimeWindow) String() string {
	s := w.Runtime + " " + w.Versions.String()
	if w.OCIRuntime != "" {
		s += " with " + w.OCIRuntime + " " + w.OCIVersions.String()
	}
	return s
}

// NormalizeRuntime returns the name the oracle uses for a runtime name:
// lower case, "crio" as "cri-o".
func NormalizeRuntime(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "crio" {
		return CRIO
	}
	return n
}

var runtimeVersionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)(\.\d+)?([-+~].*)?$`)

// runtimeMinor is the minor of a runtime version such as "1.7.24",
// "1.7.24~ds1", "2.4.2+unknown", "v1.5.2" or "1.21".
func runtimeMinor(s string) (release.Minor, bool) {
	m := runtimeVersionRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return release.Minor{}, false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return release.Minor{Major: major, Minor: minor}, true
}

// versionStated says whether a runtime version is given: the kubelet
// reports "Unknown" when the runtime's Version call fails.
func versionStated(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && !strings.EqualFold(s, "unknown")
}

// ParseContainerRuntimeVersion splits node.status.nodeInfo.
// containerRuntimeVersion ("containerd://1.7.24", "cri-o://1.34.0") into
// the runtime's name and version; the version is "" where the kubelet
// reports "Unknown".
func ParseContainerRuntimeVersion(s string) (name, ver string) {
	name, ver, _ = strings.Cut(strings.TrimSpace(s), "://")
	if !versionStated(ver) {
		ver = ""
	}
	return name, ver
}

// ParseRuntime parses NAME[/VERSION][+OCI[/VERSION]], e.g. "containerd",
// "containerd/2.4.2+crun", "cri-o/1.34.0+runc/1.5.2", into the runtime
// fields of HostFacts.
func ParseRuntime(s string) (HostFacts, error) {
	var h HostFacts
	cri, oci, hasOCI := strings.Cut(strings.TrimSpace(s), "+")
	parse := func(part, what string) (string, string, error) {
		name, ver, hasVer := strings.Cut(part, "/")
		if strings.TrimSpace(name) == "" {
			return "", "", fmt.Errorf("runtime %q: no %s name; want NAME[/VERSION][+OCI[/VERSION]], e.g. containerd/2.4.2+crun/1.21", s, what)
		}
		if hasVer {
			if _, ok := runtimeMinor(ver); !ok {
				return "", "", fmt.Errorf("runtime %q: %s version %q is not MAJOR.MINOR[.PATCH]", s, what, ver)
			}
		}
		return strings.TrimSpace(name), strings.TrimSpace(ver), nil
	}
	var err error
	if h.Runtime, h.RuntimeVersion, err = parse(cri, "CRI runtime"); err != nil {
		return HostFacts{}, err
	}
	if hasOCI {
		if h.OCIRuntime, h.OCIRuntimeVersion, err = parse(oci, "OCI runtime"); err != nil {
			return HostFacts{}, err
		}
	}
	return h, nil
}

// FormatRuntime renders the runtime fields of h as ParseRuntime reads them.
func FormatRuntime(h HostFacts) string {
	s := h.Runtime
	if h.RuntimeVersion != "" {
		s += "/" + h.RuntimeVersion
	}
	if h.OCIRuntime != "" {
		s += "+" + h.OCIRuntime
		if h.OCIRuntimeVersion != "" {
			s += "/" + h.OCIRuntimeVersion
		}
	}
	return s
}

// describeRuntime names the host's runtime for a reason, e.g.
// "containerd v2.4.2 with crun".
func describeRuntime(h HostFacts) string {
	if h.Runtime == "" {
		return "an unnamed runtime"
	}
	s := h.Runtime
	if h.RuntimeVersion != "" {
		s += " v" + release.BareVersion(h.RuntimeVersion)
	}
	if h.OCIRuntime != "" {
		s += " with " + h.OCIRuntime
		if h.OCIRuntimeVersion != "" {
			s += " v" + release.BareVersion(h.OCIRuntimeVersion)
		}
	}
	return s
}

// matches says whether a host may run this window's runtimes. A fact the
// host does not state (an empty name or version) matches any: the oracle
// then answers only when every variant it matches agrees (runtimePhase).
func (w RuntimeWindow) matches(h HostFacts) bool {
	return runtimeMatches(h.Runtime, h.RuntimeVersion, w.Runtime, w.Versions) &&
		(w.OCIRuntime == "" || runtimeMatches(h.OCIRuntime, h.OCIRuntimeVersion, w.OCIRuntime, w.OCIVersions))
}

// runtimeMatches says whether a runtime the host names (name, version; ""
// for unstated) may be want at a minor within versions.
func runtimeMatches(name, version, want string, versions release.Window) bool {
	if name != "" && NormalizeRuntime(name) != want {
		return false
	}
	if versionStated(version) {
		m, ok := runtimeMinor(version)
		if !ok || !versions.ContainsMinor(m) {
			return false
		}
	}
	return true
}

// runtimePhase picks the rule's upstream phase at v for the host's
// runtime. It returns the phase and the sources of the variants it comes
// from, or, where the runtime was not researched for the rule (no variant
// matches, or the variants that match an unstated fact disagree), why.
func (r *Rule) runtimePhase(h HostFacts, v *version.Version) (p Phase, sources, notResearched string) {
	var cands []RuntimeVariant
	for _, rv := range r.Runtimes {
		if rv.Match.matches(h) {
			cands = append(cands, rv)
		}
	}
	if len(cands) == 0 {
		return Phase{}, "", fmt.Sprintf("runtime %s not researched for this rule (researched: %s)", describeRuntime(h), r.researchedRuntimes())
	}
	p = findPhase(cands[0].phases(r), v)
	var srcs []string
	for _, c := range cands {
		if !reflect.DeepEqual(findPhase(c.phases(r), v), p) {
			return Phase{}, "", fmt.Sprintf("runtime %s: the outcome differs between %s and %s, and the node does not say which it runs",
				describeRuntime(h), cands[0].Match, c.Match)
		}
		if !contains(srcs, c.Source) {
			srcs = append(srcs, c.Source)
		}
	}
	return p, strings.Join(srcs, "; "), ""
}

// researchedRuntimes lists the runtime windows of the rule's variants.
func (r *Rule) researchedRuntimes() string { return researchedWindows(r.Runtimes) }

// researchedWindows renders the windows of vs compactly, per CRI runtime,
// e.g. "containerd v1.7, v2.4 with runc v1.1, v1.5 or crun v1.21; cri-o
// v1.34 with any OCI runtime".
func researchedWindows(vs []RuntimeVariant) string {
	var names []string
	cri, oci := map[string][]string{}, map[string][]string{}
	for _, v := range vs {
		m := v.Match
		if !contains(names, m.Runtime) {
			names = append(names, m.Runtime)
		}
		if w := "v" + m.Versions.From.String(); !contains(cri[m.Runtime], w) {
			cri[m.Runtime] = append(cri[m.Runtime], w)
		}
		o := "any OCI runtime"
		if m.OCIRuntime != "" {
			o = m.OCIRuntime + " v" + m.OCIVersions.From.String()
		}
		if !contains(oci[m.Runtime], o) {
			oci[m.Runtime] = append(oci[m.Runtime], o)
		}
	}
	var out []string
	for _, n := range names {
		o := oci[n]
		with := o[len(o)-1]
		if len(o) > 1 {
			with = strings.Join(o[:len(o)-1], ", ") + " or " + with
		}
		out = append(out, n+" "+strings.Join(cri[n], ", ")+" with "+with)
	}
	return strings.Join(out, "; ")
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Runtime windows of the releases read (RuntimesRead), one minor each.
var (
	containerd17 = RuntimeWindow{Runtime: Containerd, Versions: win("1.7", "1.8")}
	containerd24 = RuntimeWindow{Runtime: Containerd, Versions: win("2.4", "2.5")}
	crio134      = RuntimeWindow{Runtime: CRIO, Versions: win("1.34", "1.35")}

	runc11  = RuntimeWindow{OCIRuntime: Runc, OCIVersions: win("1.1", "1.2")}
	runc15  = RuntimeWindow{OCIRuntime: Runc, OCIVersions: win("1.5", "1.6")}
	crun121 = RuntimeWindow{OCIRuntime: Crun, OCIVersions: win("1.21", "1.22")}

	containerdRead = []RuntimeWindow{containerd17, containerd24}
	crioRead       = []RuntimeWindow{crio134}
	ociRead        = []RuntimeWindow{runc11, runc15, crun121}
	// anyOCI: the CRI runtime decides before any OCI runtime runs.
	anyOCI = []RuntimeWindow{{}}
)

// onRuntimes is one variant per CRI window × OCI window, all with the same
// source and phases (nil: the rule's own).
func onRuntimes(cri, oci []RuntimeWindow, source string, upstream []Phase) []RuntimeVariant {
	var out []RuntimeVariant
	for _, c := range cri {
		for _, o := range oci {
			w := c
			w.OCIRuntime, w.OCIVersions = o.OCIRuntime, o.OCIVersions
			out = append(out, RuntimeVariant{Match: w, Source: source, Upstream: upstream})
		}
	}
	return out
}

func variants(groups ...[]RuntimeVariant) []RuntimeVariant {
	var out []RuntimeVariant
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}
