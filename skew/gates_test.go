package skew

import (
	"testing"

	"github.com/skewproof/skewproof/skew/release"
)

func TestParseFeatureGates(t *testing.T) {
	f := map[string]bool{}
	if err := ParseFeatureGates("AppArmor=false, AppArmorFields=false", f); err != nil || f["AppArmor"] || f["AppArmorFields"] || len(f) != 2 {
		t.Errorf("ParseFeatureGates: %v %v", f, err)
	}
	for _, bad := range []string{"AppArmor=maybe", "AppArmor", "=true", "a/b=true"} {
		if err := ParseFeatureGates(bad, map[string]bool{}); err == nil {
			t.Errorf("ParseFeatureGates(%q) accepted", bad)
		}
	}
}

func TestCheckFeatureGate(t *testing.T) {
	for _, c := range []struct {
		gate  string
		value bool
		v     string
		ok    bool
	}{
		{"AppArmor", false, "1.30.14", true},
		{"AppArmor", false, "1.31.14", false},
		{"AppArmor", true, "1.32.13", true},
		{"AppArmor", true, "1.33.13", false},
		{"AppArmorFields", false, "1.30.14", true},
		{"SomethingElse", false, "1.37.2", true},
	} {
		err := CheckFeatureGate(c.gate, c.value, release.MustParseVersion(c.v))
		if (err == nil) != c.ok {
			t.Errorf("%s=%v at %s: %v", c.gate, c.value, c.v, err)
		}
	}
}
