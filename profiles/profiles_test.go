package profiles

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/status"
)

func TestSeccompProfilesAreValidJSON(t *testing.T) {
	ps := Seccomp()
	if len(ps) < 4 {
		t.Fatalf("want at least 4 profiles, got %d", len(ps))
	}
	for _, p := range ps {
		var v struct {
			DefaultAction string `json:"defaultAction"`
			Syscalls      []struct {
				Names  []string `json:"names"`
				Action string   `json:"action"`
			} `json:"syscalls"`
		}
		if err := json.Unmarshal(p.Content, &v); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if v.DefaultAction == "" || len(v.Syscalls) == 0 {
			t.Errorf("%s: want a defaultAction and syscall rules", p.Name)
		}
	}
	for _, n := range []string{DenyMkdir, DenyExecve, LogMkdir, InvalidAction} {
		if _, ok := SeccompByName(n); !ok {
			t.Errorf("profile %s missing", n)
		}
	}
	if DenyMkdir != names.SeccompLocalhostProfile {
		t.Errorf("DenyMkdir = %q, oracle scenarios use %q", DenyMkdir, names.SeccompLocalhostProfile)
	}
	if !strings.HasPrefix(names.SeccompMissingProfilePrefix, Dir+"/") {
		t.Errorf("the oracle's missing profile %q is not under %s", names.SeccompMissingProfilePrefix, Dir)
	}
}

// The agent of FixturesNamespace writes each fixture where the suites look
// for it.
func TestFixturesWhereTheSuitesLook(t *testing.T) {
	ms := FixtureManifests()
	if len(ms) != len(Seccomp()) {
		t.Fatalf("%d manifests for %d profiles", len(ms), len(Seccomp()))
	}
	for i, m := range ms {
		if got := api.SeccompLocalhostProfile(FixturesNamespace, m.Name); got != Seccomp()[i].Name {
			t.Errorf("manifest %s installs at %s, the suites use %s", m.Name, got, Seccomp()[i].Name)
		}
	}
}

// Each AppArmor fixture declares the profile name it is installed and
// referenced under (its file name): the agent checks the loaded name.
func TestAppArmorFixturesDeclareTheirName(t *testing.T) {
	ms := AppArmorFixtureManifests()
	if len(ms) == 0 {
		t.Fatal("no AppArmor fixture")
	}
	found := false
	for _, m := range ms {
		if !strings.Contains(m.Content, "\nprofile "+m.Name+" ") {
			t.Errorf("fixture %s does not declare 'profile %s'", m.Name, m.Name)
		}
		if m.Name == names.AppArmorLocalhostProfile {
			found = true
			if !strings.Contains(m.Content, "deny /** w,") {
				t.Errorf("%s must deny writes", m.Name)
			}
		}
	}
	if !found {
		t.Errorf("no fixture named %s (names.AppArmorLocalhostProfile)", names.AppArmorLocalhostProfile)
	}
}

func TestAppArmorNodes(t *testing.T) {
	reps := []NodeReport{
		{Nodes: []status.NodeState{{Node: "a", Status: api.Installed}, {Node: "b", Status: api.Unsupported}}},
		{Nodes: []status.NodeState{{Node: "a", Status: api.Installed}, {Node: "b", Status: api.Installed}}},
	}
	got, err := appArmorNodes(reps)
	if !got["a"] || got["b"] || len(got) != 2 || err != nil {
		t.Errorf("appArmorNodes = %v, %v; want a loaded, b not", got, err)
	}
	// A node whose agent failed to load a profile has AppArmor: an error
	// with the agent's message, not "no AppArmor".
	reps = append(reps, NodeReport{Manifest: Manifest{Name: "k8s-deny-write"},
		Nodes: []status.NodeState{{Node: "a", Status: api.Installed}, {Node: "c", Status: api.Failed, Message: "apparmor_parser --replace: syntax error"}}})
	if _, err := appArmorNodes(reps); err == nil || !strings.Contains(err.Error(), "node c did not load AppArmor profile k8s-deny-write: Failed") ||
		!strings.Contains(err.Error(), "apparmor_parser --replace: syntax error") {
		t.Errorf("a node that failed to load: %v", err)
	}
}
