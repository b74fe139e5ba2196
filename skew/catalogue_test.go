package skew

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew/release"
)

// catalogueIDs reads testdata/catalogue-ids.txt, the seccomp and AppArmor
// ids of the scenario catalogue.
func catalogueIDs(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("testdata/catalogue-ids.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ids = append(ids, line)
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(ids) < 50 {
		t.Fatalf("catalogue id list looks truncated: %d ids", len(ids))
	}
	return ids
}

func TestEveryCatalogueIDHasARule(t *testing.T) {
	ids := catalogueIDs(t)
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
		if _, ok := RuleByID(id); !ok {
			t.Errorf("catalogue id %s has no rule", id)
		}
	}
	for _, r := range Rules() {
		if !want[r.ID] {
			t.Errorf("rule %s is not in the catalogue", r.ID)
		}
	}
	// Catalogue order is kept.
	rs := Rules()
	for i, id := range ids {
		if i < len(rs) && rs[i].ID != id {
			t.Errorf("rule %d is %s, catalogue has %s", i, rs[i].ID, id)
			break
		}
	}
}

func TestRulesAreComplete(t *testing.T) {
	for _, r := range Rules() {
		if r.Title == "" || r.Source == "" {
			t.Errorf("%s: title and source citation are required", r.ID)
		}
		spec := "KEP-135"
		if strings.HasPrefix(r.ID, "apparmor/") {
			spec = "KEP-24"
		}
		if !strings.HasPrefix(r.KEPRef, spec+" §") {
			t.Errorf("%s: kepRef %q must cite %s and a section", r.ID, r.KEPRef, spec)
		}
		if strings.Contains(r.ID, "/failure/row-") {
			row := r.ID[strings.LastIndex(r.ID, "-")+1:]
			if !strings.Contains(r.KEPRef, "row "+row) {
				t.Errorf("%s: kepRef %q must cite failure-table row %s", r.ID, r.KEPRef, row)
			}
		}
		if r.Component != Apiserver && r.Component != Kubelet {
			t.Errorf("%s: component %q", r.ID, r.Component)
		}
		if len(r.KEP) == 0 || len(r.Upstream) == 0 {
			t.Errorf("%s: both KEP and upstream phases are required", r.ID)
		}
		// Every minor from long before the served range to past it has
		// exactly one phase, in plan and upstream.
		for m := 10; m <= 45; m++ {
			v := release.MustParseVersion("1." + itoa(m) + ".0")
			for name, ps := range map[string][]Phase{"KEP": r.KEP, "upstream": r.Upstream} {
				n := 0
				for _, p := range ps {
					if p.Window.Contains(v) {
						n++
					}
					if p.Name == "" || (p.Obs.Summary == "" && p.Obs.NotApplicable == "") {
						t.Errorf("%s: %s phase without name or summary", r.ID, name)
					}
				}
				if n != 1 {
					t.Errorf("%s: %d %s phases hold at v%s, want exactly 1", r.ID, n, name, v)
				}
			}
		}
		if r.SameAs != "" {
			other, ok := RuleByID(r.SameAs)
			if !ok {
				t.Errorf("%s: sameAs %s does not exist", r.ID, r.SameAs)
			} else if !samePhases(r.KEP, other.KEP) || !samePhases(r.Upstream, other.Upstream) {
				t.Errorf("%s: differs from %s, of which it is an alias", r.ID, r.SameAs)
			}
		}
	}
}

func samePhases(a, b []Phase) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Window != b[i].Window || !sameObservation(a[i].Obs, b[i].Obs) {
			return false
		}
	}
	return true
}

func itoa(i int) string {
	const d = "0123456789"
	if i < 10 {
		return d[i : i+1]
	}
	return itoa(i/10) + d[i%10:i%10+1]
}
