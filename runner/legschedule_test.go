package runner

import (
	"strings"
	"testing"

	"github.com/skewproof/skewproof/skew/release"
)

func scheduleLegs() []Leg {
	leg := func(name string, kubelets int, aa bool) Leg {
		return Leg{Name: name, AppArmorNodes: aa, Cluster: release.Cluster{Kubelets: make([]string, kubelets)}}
	}
	// The history preset's shape: seccomp-only legs first, the legs with
	// AppArmor nodes last.
	return []Leg{leg("a", 2, false), leg("b", 1, false), leg("c", 2, false), leg("d", 1, true), leg("e", 2, true), leg("f", 2, true)}
}

// startAll takes every leg next() gives now.
func startAll(s *legSchedule) (names, waits []string) {
	for {
		i, w := s.next()
		waits = append(waits, w...)
		if i < 0 {
			return names, waits
		}
		names = append(names, s.legs[i].Name)
	}
}

// Two at once on two cores: the legs with AppArmor nodes start first and
// one after the other, the seccomp-only legs beside them; no two of them
// run at once (2+2 and 2+1 nodes are more than 2 cores), and the wait is
// said once per leg.
func TestLegScheduleAppArmorLegsFirstNeverOverTheCores(t *testing.T) {
	legs := scheduleLegs()
	s := newLegSchedule(legs, 2, 2)
	var order, waits []string
	end := func(name string) {
		for _, i := range s.running {
			if legs[i].Name == name {
				s.ended(i)
				return
			}
		}
		t.Fatalf("%s is not running (running %v)", name, s.running)
	}
	step := func(ended string) {
		if ended != "" {
			end(ended)
		}
		started, w := startAll(s)
		order = append(order, strings.Join(started, "+"))
		waits = append(waits, w...)
		if n, _ := s.runningAppArmorNodes(); n > 2 && len(s.running) > 1 {
			t.Errorf("after %q: %d AppArmor nodes at once on 2 cores", ended, n)
		}
	}
	step("")  // e, and a beside it (f and d wait for e)
	step("a") // b (f and d still wait)
	step("e") // f
	step("b") // c
	step("c") // nothing: d waits for f
	step("f") // d
	step("d")
	if got := strings.Join(order, " "); got != "e+a b f c  d " {
		t.Errorf("start order %q", got)
	}
	if s.left() {
		t.Errorf("legs left: pending %v, running %v", s.pending, s.running)
	}
	want := []string{
		"f waits for e: 4 AppArmor nodes at once would be more than the host's 2 cores",
		"d waits for e: 3 AppArmor nodes at once would be more than the host's 2 cores",
	}
	if strings.Join(waits, "\n") != strings.Join(want, "\n") {
		t.Errorf("waits:\n%s\nwant:\n%s", strings.Join(waits, "\n"), strings.Join(want, "\n"))
	}
}

// One at a time keeps the matrix's order; a host with the cores runs legs
// with AppArmor nodes side by side; a leg with more AppArmor nodes than
// the host has cores still starts when it would be the only one.
func TestLegScheduleOrderAndCores(t *testing.T) {
	s := newLegSchedule(scheduleLegs(), 1, 2)
	var order []string
	for s.left() {
		names, _ := startAll(s)
		order = append(order, names...)
		s.ended(s.running[0])
	}
	if got := strings.Join(order, " "); got != "a b c d e f" {
		t.Errorf("one at a time: %s", got)
	}
	if names, waits := startAll(newLegSchedule(scheduleLegs(), 3, 16)); strings.Join(names, " ") != "e f d" || waits != nil {
		t.Errorf("16 cores, 3 at once: started %v, waits %v", names, waits)
	}
	if names, _ := startAll(newLegSchedule(scheduleLegs(), 2, 1)); strings.Join(names, " ") != "e a" {
		t.Errorf("1 core: started %v", names)
	}
}
