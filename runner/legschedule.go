package runner

import (
	"fmt"
	"slices"
	"strings"
)

// legSchedule orders the start of a matrix's legs when several run at
// once. A leg's AppArmor nodes (one User-Mode Linux kernel per worker) are
// most of its CPU: each spends a host core's worth on every pod it starts,
// so two legs with AppArmor nodes side by side on a small host each take
// as long as both one after the other (docs/clusters/README.md). The legs
// with AppArmor nodes therefore start first, the most nodes first, and
// never with more AppArmor nodes running at once than the host has cores
// (a leg with more starts alone among them); the other legs fill the free
// slots in the matrix's order. With one leg at a time the order is the
// matrix's.
type legSchedule struct {
	legs  []Leg
	slots int
	cores int
	// pending holds the legs not started, in start order.
	pending []int
	// running holds the legs started and not ended.
	running []int
	// told: the legs whose wait for cores was said.
	told map[int]bool
}

func newLegSchedule(legs []Leg, slots, cores int) *legSchedule {
	s := &legSchedule{legs: legs, slots: max(slots, 1), cores: max(cores, 1), told: map[int]bool{}}
	for i := range legs {
		s.pending = append(s.pending, i)
	}
	if s.slots > 1 {
		slices.SortStableFunc(s.pending, func(a, b int) int { return appArmorNodesOf(legs[b]) - appArmorNodesOf(legs[a]) })
	}
	return s
}

// appArmorNodesOf is how many AppArmor nodes leg l's cluster has.
func appArmorNodesOf(l Leg) int {
	if l.AppArmorNodes {
		return len(l.Cluster.Kubelets)
	}
	return 0
}

func (s *legSchedule) left() bool { return len(s.pending) > 0 || len(s.running) > 0 }

// runningAppArmorNodes counts the AppArmor nodes of the running legs.
func (s *legSchedule) runningAppArmorNodes() (n int, names []string) {
	for _, i := range s.running {
		if k := appArmorNodesOf(s.legs[i]); k > 0 {
			n += k
			names = append(names, s.legs[i].Name)
		}
	}
	return n, names
}

// next takes the leg to start now (-1: none until a leg ends), and says
// once of each leg with AppArmor nodes that a free slot passed over why it
// waits.
func (s *legSchedule) next() (leg int, waits []string) {
	if len(s.running) >= s.slots {
		return -1, nil
	}
	busy, names := s.runningAppArmorNodes()
	for k, i := range s.pending {
		if n := appArmorNodesOf(s.legs[i]); n > 0 && busy > 0 && busy+n > s.cores {
			if !s.told[i] {
				s.told[i] = true
				waits = append(waits, fmt.Sprintf("%s waits for %s: %d AppArmor nodes at once would be more than the host's %d cores",
					s.legs[i].Name, strings.Join(names, ", "), busy+n, s.cores))
			}
			continue
		}
		s.pending = slices.Delete(s.pending, k, k+1)
		s.running = append(s.running, i)
		return i, waits
	}
	return -1, waits
}

// ended records that leg i has ended.
func (s *legSchedule) ended(i int) {
	s.running = slices.DeleteFunc(s.running, func(j int) bool { return j == i })
}
