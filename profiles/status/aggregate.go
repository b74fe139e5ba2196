// Package status aggregates the per-node statuses of a profile into the
// profile's status: the lowest common status of its nodes
// (the security-profiles-operator scalable-status design), with Failed and Unsupported ranked lowest
// so that one such node determines the aggregate (api.Status.Rank).
//
// Aggregate is pure. Reconcile and Controller read node statuses with a
// label-selector list (or an informer cache) and write the profile's status
// subresource, and only when it changes.
package status

import (
	"sort"

	"github.com/skewproof/skewproof/profiles/api"
)

// NodeState is the status of a profile on one node.
type NodeState struct {
	Node    string
	Status  api.Status
	Message string
}

// Result is an aggregate over nodes.
type Result struct {
	// Status is the lowest-ranked status over the expected nodes (Pending
	// when there are none).
	Status api.Status
	// Nodes counts the expected nodes by status; an expected node without
	// a status counts as Pending.
	Nodes map[api.Status]int32
	// NotReady lists every expected node that is not Installed, lowest
	// status first, then by name.
	NotReady []NodeState
	// Ignored counts statuses of nodes that are not expected (e.g. a node
	// that left the cluster); they do not change the aggregate.
	Ignored int
}

// Aggregate computes the aggregate of got over the expected nodes. When
// expected is nil, every node of got is expected. A node listed twice in got
// counts once, with its lowest status.
func Aggregate(expected []string, got []NodeState) Result {
	byNode := make(map[string]NodeState, len(got))
	for _, s := range got {
		if !s.Status.Valid() {
			s.Status = api.Pending
		}
		if old, dup := byNode[s.Node]; dup && old.Status.Rank() <= s.Status.Rank() {
			continue
		}
		byNode[s.Node] = s
	}
	if expected == nil {
		expected = make([]string, 0, len(byNode))
		for n := range byNode {
			expected = append(expected, n)
		}
	}
	r := Result{Status: api.Installed, Nodes: map[api.Status]int32{}}
	seen := make(map[string]bool, len(expected))
	for _, n := range expected {
		if seen[n] {
			continue
		}
		seen[n] = true
		s, ok := byNode[n]
		if !ok {
			s = NodeState{Node: n, Status: api.Pending, Message: "no status from this node yet"}
		}
		r.Nodes[s.Status]++
		if s.Status.Rank() < r.Status.Rank() {
			r.Status = s.Status
		}
		if s.Status != api.Installed {
			r.NotReady = append(r.NotReady, s)
		}
	}
	for n := range byNode {
		if !seen[n] {
			r.Ignored++
		}
	}
	if len(seen) == 0 {
		r.Status = api.Pending
	}
	sort.Slice(r.NotReady, func(i, j int) bool {
		a, b := r.NotReady[i], r.NotReady[j]
		if a.Status.Rank() != b.Status.Rank() {
			return a.Status.Rank() < b.Status.Rank()
		}
		return a.Node < b.Node
	})
	return r
}

// ProfileStatus is the status a profile shows for r.
func (r Result) ProfileStatus(localhostProfile string, generation int64) api.ProfileStatus {
	ps := api.ProfileStatus{
		Status:             r.Status,
		LocalhostProfile:   localhostProfile,
		ObservedGeneration: generation,
	}
	if len(r.Nodes) > 0 {
		ps.Nodes = make(map[api.Status]int32, len(r.Nodes))
		for k, v := range r.Nodes {
			ps.Nodes[k] = v
		}
	}
	for i, s := range r.NotReady {
		if i == api.MaxNotReady {
			break
		}
		ps.NotReady = append(ps.NotReady, s.Node)
	}
	return ps
}

// NodesIn returns the nodes of r.NotReady whose status is one of ss.
func (r Result) NodesIn(ss ...api.Status) []string {
	var out []string
	for _, s := range r.NotReady {
		for _, want := range ss {
			if s.Status == want {
				out = append(out, s.Node)
				break
			}
		}
	}
	return out
}
