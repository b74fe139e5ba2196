// Package servedtest holds what the tests of the served releases share:
// the served list of ENVIRONMENT.md ("Sources"), so that no test needs the
// network.
package servedtest

import (
	"sort"
	"strings"

	"github.com/hashicorp/go-version"
)

// Versions is the served list of ENVIRONMENT.md ("Sources").
var Versions = []string{
	"v1.29.6", "v1.30.4", "v1.30.14", "v1.31.0", "v1.31.14", "v1.32.2", "v1.32.13", "v1.33.6", "v1.33.13",
	"v1.34.0", "v1.34.1", "v1.34.2", "v1.34.3", "v1.34.4", "v1.35.4", "v1.36.1", "v1.36.3", "v1.37.2",
}

// Sorted is Versions parsed as release.ParseVersion parses them (without the
// "v"; this package cannot import skew, whose tests use it), oldest first.
func Sorted() []*version.Version {
	var vs []*version.Version
	for _, s := range Versions {
		vs = append(vs, version.Must(version.NewVersion(strings.TrimPrefix(s, "v"))))
	}
	sort.Sort(version.Collection(vs))
	return vs
}
