package release

import (
	"fmt"
	"strings"

	"github.com/hashicorp/go-version"
)

// Cluster is one cluster of the test matrix: a control plane at Apiserver
// and one worker per kubelet version its skew window allows.
type Cluster struct {
	Apiserver string   `json:"apiserver"`
	Kubelets  []string `json:"kubelets"`
	// Missing lists allowed kubelet minors with no served release.
	Missing []string `json:"missingKubeletMinors,omitempty"`
	// Suites, when set, are the suites the cluster runs (a preset's legs
	// run only the suites whose rules were read at their versions).
	Suites []string `json:"suites,omitempty"`
}

// ParseMinorRange parses "1.34..1.37" (or a single "1.34").
func ParseMinorRange(s string) (from, to Minor, err error) {
	parts := strings.Split(s, "..")
	switch len(parts) {
	case 1:
		from, err = ParseMinor(parts[0])
		return from, from, err
	case 2:
		if from, err = ParseMinor(parts[0]); err != nil {
			return from, to, fmt.Errorf("range %q: %v", s, err)
		}
		if to, err = ParseMinor(parts[1]); err != nil {
			return from, to, fmt.Errorf("range %q: %v", s, err)
		}
		if to.Less(from) {
			return from, to, fmt.Errorf("range %q is reversed; write the older minor first, e.g. %s..%s", s, to, from)
		}
		if from.Major != to.Major {
			return from, to, fmt.Errorf("range %q spans major versions; use one major", s)
		}
		return from, to, nil
	}
	return from, to, fmt.Errorf("malformed range %q: want FROM..TO such as 1.34..1.37", s)
}

// Matrix plans one cluster per kube-apiserver minor in [from, to], each at
// the newest served patch, with the newest served patch of every kubelet
// minor the skew policy allows.
func Matrix(served []*version.Version, from, to Minor) ([]Cluster, error) {
	if to.Less(from) {
		return nil, fmt.Errorf("range %s..%s is reversed; write the older minor first", from, to)
	}
	var out []Cluster
	for m := from; !to.Less(m); m = (Minor{m.Major, m.Minor + 1}) {
		a := NewestServed(served, m)
		if a == nil {
			return nil, fmt.Errorf("no served release of kubernetes v%s; served releases: %s", m, JoinVersions(served))
		}
		c := Cluster{Apiserver: a.String()}
		for _, km := range KubeletMinors(a) {
			if k := NewestServed(served, km); k != nil {
				c.Kubelets = append(c.Kubelets, k.String())
			} else {
				c.Missing = append(c.Missing, km.String())
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// JoinVersions lists versions for a message: "1.36.3, 1.37.2".
func JoinVersions(vs []*version.Version) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return strings.Join(s, ", ")
}
