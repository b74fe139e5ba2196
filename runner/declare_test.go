package runner

import (
	"strings"
	"testing"

	senv "github.com/skewproof/skewproof/suites/env"
)

// The fixtures of a run are those its suites declare, nothing by name.
func TestFixturesOfTheDeclaredSuites(t *testing.T) {
	decls := []senv.Suite{
		{Family: "a", Fixtures: []string{senv.FixtureSeccompProfiles, senv.FixtureAppArmorProfiles}},
		{Family: "b"},
		{Family: "c", Fixtures: []string{senv.FixtureSeccompProfiles}},
	}
	for _, c := range []struct {
		suites []string
		want   []string
	}{
		{[]string{"b"}, nil},
		{[]string{"c"}, []string{senv.FixtureSeccompProfiles}},
		{[]string{"b", "c", "a"}, []string{senv.FixtureSeccompProfiles, senv.FixtureAppArmorProfiles}},
	} {
		got, err := fixturesOf(decls, c.suites)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(c.want) {
			t.Errorf("%v: %v, want %v", c.suites, got, c.want)
		}
		for _, f := range c.want {
			if !got[f] {
				t.Errorf("%v: %v lacks %s", c.suites, got, f)
			}
		}
	}
	if _, err := fixturesOf(decls, []string{"nope"}); err == nil || !strings.Contains(err.Error(), `no suite "nope"`) {
		t.Errorf("an undeclared suite: %v", err)
	}
}
