package runner

import (
	"slices"
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
		chosen, err := ResolveSuites(decls, c.suites, false)
		if err != nil {
			t.Fatal(err)
		}
		got := fixturesOf(chosen)
		if len(got) != len(c.want) {
			t.Errorf("%v: %v, want %v", c.suites, got, c.want)
		}
		for _, f := range c.want {
			if !got[f] {
				t.Errorf("%v: %v lacks %s", c.suites, got, f)
			}
		}
	}
}

// The suites of a run are those named that the binary has (each once), or
// all; a certification takes them all.
func TestResolveSuites(t *testing.T) {
	decls := []senv.Suite{{Family: "a"}, {Family: "b"}}
	for _, c := range []struct {
		named   []string
		certify bool
		want    []string
		err     string
	}{
		{nil, false, []string{"a", "b"}, ""},
		{nil, true, []string{"a", "b"}, ""},
		{[]string{"b"}, false, []string{"b"}, ""},
		{[]string{"b", "a"}, true, []string{"b", "a"}, ""},
		{[]string{"b", "b"}, false, []string{"b"}, ""},
		{[]string{"b", "b"}, true, nil, "--certify judges every suite: give --suites a,b"},
		{[]string{"b"}, true, nil, "--certify judges every suite: give --suites a,b"},
		{[]string{"a", "nope"}, false, nil, `--suites: the suite binary has no suite "nope" (it has: a, b)`},
	} {
		got, err := ResolveSuites(decls, c.named, c.certify)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v certify %v: %v, want %q", c.named, c.certify, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(senv.Families(got), c.want) {
			t.Errorf("%v certify %v: %v, %v; want %v", c.named, c.certify, senv.Families(got), err, c.want)
		}
	}
}
