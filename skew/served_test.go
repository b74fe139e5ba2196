package skew

import (
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/skew/served/servedtest"
)

func servedVersionsForTest(t *testing.T) []*version.Version {
	t.Helper()
	var vs []*version.Version
	for _, s := range servedtest.Versions {
		v, err := ParseVersion(s)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	sort.Sort(version.Collection(vs))
	return vs
}

func TestCheckServedIn(t *testing.T) {
	served := servedVersionsForTest(t)
	if err := CheckServedIn(served, MustParseVersion("1.34.4")); err != nil {
		t.Errorf("1.34.4: %v", err)
	}
	err := CheckServedIn(served, MustParseVersion("1.36.2"))
	if err == nil || !strings.Contains(err.Error(), "served v1.36 releases: 1.36.1, 1.36.3") {
		t.Errorf("1.36.2: %v", err)
	}
	err = CheckServedIn(served, MustParseVersion("1.28.3"))
	if err == nil || !strings.Contains(err.Error(), "no v1.28 release is") || !strings.Contains(err.Error(), "1.29.6") {
		t.Errorf("1.28.3: %v", err)
	}
}
