// Package release holds Kubernetes release versions apart from the oracle
// (as k8s.io/apimachinery/pkg/util/version stands apart): parsing, minor
// lines and windows of them, the kube-apiserver/kubelet version-skew
// policy, which versions are served, and the cluster matrix of a range of
// minors.
package release

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/go-version"
)

var (
	fullVersionRE  = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)$`)
	minorVersionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)$`)
)

// ParseVersion parses a Kubernetes release version such as "1.37.2" or
// "v1.37.2". Pre-releases and partial versions are rejected.
func ParseVersion(s string) (*version.Version, error) {
	t := strings.TrimSpace(s)
	if !fullVersionRE.MatchString(t) {
		return nil, fmt.Errorf("malformed version %q: want MAJOR.MINOR.PATCH such as 1.37.2 or v1.37.2", s)
	}
	v, err := version.NewVersion(BareVersion(t))
	if err != nil {
		return nil, fmt.Errorf("malformed version %q: %v; want MAJOR.MINOR.PATCH such as 1.37.2", s, err)
	}
	return v, nil
}

// ParseReleaseVersion parses a version as nodes, /version and run records
// state it ("v1.37.2", "v1.37.2-rc.0+abc", "v1.34.4+k3s1") as the release
// it is of.
func ParseReleaseVersion(s string) (*version.Version, error) {
	s = BareVersion(s)
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	return ParseVersion(s)
}

// BareVersion is a version as skewproof writes it in names, flags and
// image tags: without surrounding space and the leading "v" ("v1.37.2" →
// "1.37.2"). It does not check the version.
func BareVersion(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "v") }

// MustParseVersion is ParseVersion for constants; it panics on error.
func MustParseVersion(s string) *version.Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// Minor is a Kubernetes minor release line such as 1.34.
type Minor struct {
	Major, Minor int
}

// ParseMinor parses "1.34" or "v1.34".
func ParseMinor(s string) (Minor, error) {
	m := minorVersionRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Minor{}, fmt.Errorf("malformed minor version %q: want MAJOR.MINOR such as 1.34", s)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return Minor{major, minor}, nil
}

// MustParseMinor is ParseMinor for constants; it panics on error.
func MustParseMinor(s string) Minor {
	m, err := ParseMinor(s)
	if err != nil {
		panic(err)
	}
	return m
}

// MinorOf returns the minor release line of v.
func MinorOf(v *version.Version) Minor {
	seg := v.Segments()
	for len(seg) < 2 {
		seg = append(seg, 0)
	}
	return Minor{seg[0], seg[1]}
}

func (m Minor) String() string { return fmt.Sprintf("%d.%d", m.Major, m.Minor) }

// Compare returns -1, 0 or 1.
func (m Minor) Compare(o Minor) int {
	switch {
	case m.Major != o.Major:
		if m.Major < o.Major {
			return -1
		}
		return 1
	case m.Minor < o.Minor:
		return -1
	case m.Minor > o.Minor:
		return 1
	}
	return 0
}

// Less reports whether m is older than o.
func (m Minor) Less(o Minor) bool { return m.Compare(o) < 0 }

// Window is a half-open range of minor releases [From, Until). A zero From
// means "since always"; a zero Until means "still holds in the newest release".
type Window struct {
	From  Minor `json:"from"`
	Until Minor `json:"until"`
}

// OpenStart: the window holds since always.
func (w Window) OpenStart() bool { return w.From == Minor{} }

// OpenEnd: the window still holds in the newest release.
func (w Window) OpenEnd() bool { return w.Until == Minor{} }

// Contains reports whether the minor line of v lies in the window.
func (w Window) Contains(v *version.Version) bool { return w.ContainsMinor(MinorOf(v)) }

// ContainsMinor reports whether m lies in the window.
func (w Window) ContainsMinor(m Minor) bool {
	if !w.OpenStart() && m.Less(w.From) {
		return false
	}
	if !w.OpenEnd() && !m.Less(w.Until) {
		return false
	}
	return true
}

// Intersect returns the minors that lie in both windows; an end stays open
// only where both windows are open there.
func (w Window) Intersect(o Window) Window {
	out := w
	if w.OpenStart() || (!o.OpenStart() && w.From.Less(o.From)) {
		out.From = o.From
	}
	if w.OpenEnd() || (!o.OpenEnd() && o.Until.Less(w.Until)) {
		out.Until = o.Until
	}
	return out
}

func (w Window) String() string {
	switch {
	case w.OpenStart() && w.OpenEnd():
		return "all versions"
	case w.OpenStart():
		return "before v" + w.Until.String()
	case w.OpenEnd():
		return "v" + w.From.String() + " onwards"
	}
	last := Minor{w.Until.Major, w.Until.Minor - 1}
	if last == w.From {
		return "v" + w.From.String() + " only"
	}
	return "v" + w.From.String() + " to v" + last.String()
}

// MarshalText renders a minor as "1.34" (empty for the zero value).
func (m Minor) MarshalText() ([]byte, error) {
	if m == (Minor{}) {
		return []byte(""), nil
	}
	return []byte(m.String()), nil
}

// MustWindow builds a window from "1.30" style minors; "" leaves that end
// open. It panics on a malformed minor (for constants).
func MustWindow(from, until string) Window {
	var w Window
	if from != "" {
		w.From = MustParseMinor(from)
	}
	if until != "" {
		w.Until = MustParseMinor(until)
	}
	return w
}
