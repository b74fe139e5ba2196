package schedule

import (
	"slices"
	"strings"
	"testing"

	senv "github.com/skewproof/skewproof/suites/env"
)

// suites are the runner's suites (runner.Suites).
var suites = []string{"seccomp", "apparmor", "profiles"}

// specsOf are the labels a dry run lists for the suites on workers: the
// seccomp suite's API rules, and per worker a rule of its own process that
// waits for the garbage collector, slow rules and the rest; the AppArmor
// suite's API and kubelet rules; the profiles suite's specs, one waiting
// for the collector and one flooding it.
func specsOf(workers ...string) []SpecLabels {
	// An API rule of a slow family: slow matters on a node only.
	specs := []SpecLabels{{"seccomp", "api"}, {"seccomp", "update", senv.LabelSlow, "api"}, {"apparmor", "api"}}
	for _, w := range workers {
		specs = append(specs,
			SpecLabels{"seccomp", "failure", senv.LabelSlow, "seccomp-failure-row-4", senv.LabelOwnProcess, senv.LabelWaitsForGC, "kubelet", "node:" + w},
			SpecLabels{"seccomp", "failure", senv.LabelSlow, "kubelet", "node:" + w},
			SpecLabels{"seccomp", "update", senv.LabelSlow, "kubelet", "node:" + w},
			SpecLabels{"seccomp", "kubelet", "node:" + w},
			SpecLabels{"apparmor", "kubelet", "node:" + w})
	}
	return append(specs, SpecLabels{"profiles", "profiles-node-status-per-node", senv.LabelWaitsForGC},
		SpecLabels{"profiles", "profiles-agent-ready"},
		SpecLabels{"profiles", "profiles-node-status-scale", senv.LabelFloodsGC})
}

func TestPlan(t *testing.T) {
	keys := func(jobs []Job) []string {
		var out []string
		for _, j := range jobs {
			out = append(out, j.Key())
		}
		return out
	}
	// Serial: one process per suite, one after the other.
	serial := Plan(suites, false, specsOf("w1", "w2"))
	if got := keys(serial); !slices.Equal(got, []string{"seccomp/all", "apparmor/all", "profiles/all"}) {
		t.Errorf("serial run: %v", got)
	}
	for i, j := range serial {
		if j.Filter != "" || (i == 0) != (j.After == nil) || i > 0 && j.After[0] != serial[i-1].Key() {
			t.Errorf("serial job %d: %+v", i, j)
		}
	}
	// No workers: the API rules and the profiles suite.
	if got := keys(Plan(suites, true, specsOf())); !slices.Equal(got, []string{"seccomp/main", "apparmor/main", "profiles/main.gc-flood", "profiles/main.rest"}) {
		t.Errorf("no workers: %v", got)
	}
	jobs := Plan(suites, true, specsOf("w1", "w2"))
	want := []string{"seccomp/api", "seccomp/w1.own", "seccomp/w1.slow", "seccomp/w1.rest", "seccomp/w2.own", "seccomp/w2.slow", "seccomp/w2.rest",
		"apparmor/api", "apparmor/w1", "apparmor/w2", "profiles/main.gc-flood", "profiles/main.rest"}
	if got := keys(jobs); !slices.Equal(got, want) {
		t.Fatalf("parallel run: %v, want %v", got, want)
	}
	by := map[string]Job{}
	for _, j := range jobs {
		by[j.Key()] = j
		if j.After != nil || j.Key() != "profiles/main.gc-flood" && j.AfterSpecs != nil {
			t.Errorf("%s waits for %v / the specs of %v: only the flood waits, for specs", j.Key(), j.After, j.AfterSpecs)
		}
	}
	for key, want := range map[string]string{
		"seccomp/api":            "node: isEmpty",
		"apparmor/w2":            "node: containsAny w2",
		"seccomp/w1.own":         "(node: containsAny w1) && ((" + senv.LabelOwnProcess + ") && (!(" + senv.LabelFloodsGC + ")))",
		"seccomp/w1.slow":        "(node: containsAny w1) && ((" + senv.LabelSlow + ") && (!(" + senv.LabelFloodsGC + " || " + senv.LabelOwnProcess + ")))",
		"seccomp/w1.rest":        "(node: containsAny w1) && (!(" + senv.LabelFloodsGC + " || " + senv.LabelOwnProcess + " || " + senv.LabelSlow + "))",
		"profiles/main.gc-flood": "(node: isEmpty) && (" + senv.LabelFloodsGC + ")",
	} {
		if f := by[key].Filter; f != want {
			t.Errorf("%s filter %q, want %q", key, f, want)
		}
	}
	if got := by["profiles/main.gc-flood"].AfterSpecs; !slices.Equal(got, []string{"seccomp/w1.own", "seccomp/w2.own", "profiles/main.rest"}) {
		t.Errorf("the flood waits for %v", got)
	}
	// Without the seccomp suite the flood waits for the profiles suite only.
	if got := Plan([]string{"profiles", "apparmor"}, true, specsOf("w1")); got[0].Key() != "profiles/main.gc-flood" || !slices.Equal(got[0].AfterSpecs, []string{"profiles/main.rest"}) {
		t.Errorf("profiles and AppArmor: %+v", got)
	}
	// A selection of one spec: one process, named by its group.
	if got := keys(Plan([]string{"seccomp"}, true, []SpecLabels{{"seccomp", "failure", senv.LabelSlow, "node:w1"}})); !slices.Equal(got, []string{"seccomp/w1"}) {
		t.Errorf("one slow spec: %v", got)
	}
	// A suite the selection has no spec of has no process.
	if got := keys(Plan([]string{"seccomp", "apparmor"}, true, []SpecLabels{{"apparmor", "api"}})); !slices.Equal(got, []string{"apparmor/main"}) {
		t.Errorf("AppArmor specs only: %v", got)
	}
}

func TestSuiteArgs(t *testing.T) {
	got := SuiteArgs("seccomp", Select("smoke", "kubelet && node: containsAny w1"), "enforce", "row-4")
	i := slices.Index(got, "-ginkgo.label-filter")
	if i < 0 || got[i+1] != "(seccomp) && ((smoke) && (kubelet && node: containsAny w1))" {
		t.Errorf("label filter of %q", got)
	}
	if j := slices.Index(got, "-ginkgo.focus"); j < 0 || got[j+1] != "enforce" {
		t.Errorf("focus of %q", got)
	}
	if j := slices.Index(got, "-ginkgo.skip"); j < 0 || got[j+1] != "row-4" {
		t.Errorf("skip of %q", got)
	}
	if got := SuiteArgs("profiles", "", "", ""); got[slices.Index(got, "-ginkgo.label-filter")+1] != "profiles" || slices.Contains(got, "-ginkgo.focus") {
		t.Errorf("plain suite: %q", got)
	}
	if !slices.Contains(got, "^"+TestName+"$") {
		t.Errorf("test function missing: %q", got)
	}
}

// The jobs of a slow node run one after the other across suites; the
// others keep running side by side.
func TestOneAtATime(t *testing.T) {
	jobs := OneAtATime(Plan([]string{"seccomp", "apparmor"}, true, specsOf("w1", "uml")), "uml")
	var chain []string
	for _, j := range jobs {
		switch j.Node {
		case "uml":
			if len(chain) > 0 && !slices.Contains(j.After, chain[len(chain)-1]) {
				t.Errorf("%s starts without waiting for %s: after %v", j.Key(), chain[len(chain)-1], j.After)
			}
			chain = append(chain, j.Key())
		case "w1":
			if len(j.After) > 0 {
				t.Errorf("%s on a node of its own waits for %v", j.Key(), j.After)
			}
		}
	}
	if len(chain) < 3 || !strings.HasPrefix(chain[0], "seccomp/") || !strings.HasPrefix(chain[len(chain)-1], "apparmor/") {
		t.Errorf("the slow node's jobs %v, want several, seccomp's first and apparmor's last", chain)
	}
}
