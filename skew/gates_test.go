package skew

import "testing"

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
