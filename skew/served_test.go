package skew

import (
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"
)

// servedForTest is the served list of ENVIRONMENT.md ("Sources").
var servedForTest = []string{
	"v1.29.6", "v1.30.4", "v1.30.14", "v1.31.0", "v1.31.14", "v1.32.2", "v1.32.13", "v1.33.6", "v1.33.13",
	"v1.34.0", "v1.34.1", "v1.34.2", "v1.34.3", "v1.34.4", "v1.35.4", "v1.36.1", "v1.36.3", "v1.37.2",
}

func servedVersionsForTest(t *testing.T) []*version.Version {
	t.Helper()
	var vs []*version.Version
	for _, s := range servedForTest {
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
