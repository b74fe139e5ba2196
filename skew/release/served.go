package release

import (
	"fmt"
	"strings"

	"github.com/hashicorp/go-version"
)

// The list of served versions comes from package skew/served, which asks the
// Go module proxy and caches the answer; the functions here only read it.

// CheckServedIn returns an error naming the served versions of the same
// minor (or all served versions) when v is not among served.
func CheckServedIn(served []*version.Version, v *version.Version) error {
	var sameMinor []string
	for _, s := range served {
		if s.Equal(v) {
			return nil
		}
		if MinorOf(s) == MinorOf(v) {
			sameMinor = append(sameMinor, s.String())
		}
	}
	if len(sameMinor) > 0 {
		return fmt.Errorf("kubernetes v%s is not served by the Go module proxy; served v%s releases: %s", v, MinorOf(v), strings.Join(sameMinor, ", "))
	}
	var all []string
	for _, s := range served {
		all = append(all, s.String())
	}
	return fmt.Errorf("kubernetes v%s is not served by the Go module proxy (no v%s release is); served releases: %s", v, MinorOf(v), strings.Join(all, ", "))
}

// NewestServed returns the newest served patch of minor m, or nil.
func NewestServed(served []*version.Version, m Minor) *version.Version {
	var best *version.Version
	for _, v := range served {
		if MinorOf(v) == m && (best == nil || v.GreaterThan(best)) {
			best = v
		}
	}
	return best
}
