package status

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/skewproof/skewproof/profiles/api"
)

func st(node string, s api.Status) NodeState { return NodeState{Node: node, Status: s} }

func TestRankOrder(t *testing.T) {
	for i := 1; i < len(api.Statuses); i++ {
		if api.Statuses[i-1].Rank() >= api.Statuses[i].Rank() {
			t.Errorf("%s must rank below %s", api.Statuses[i-1], api.Statuses[i])
		}
	}
	if api.Status("Bogus").Rank() != api.Pending.Rank() || api.Status("Bogus").Valid() {
		t.Error("an unknown status must rank like Pending and be invalid")
	}
}

func TestAggregate(t *testing.T) {
	const (
		F = api.Failed
		U = api.Unsupported
		P = api.Pending
		I = api.Installing
		D = api.Installed
	)
	cases := []struct {
		name     string
		expected []string
		got      []NodeState
		want     api.Status
		nodes    map[api.Status]int32
		notReady []string
		ignored  int
	}{
		{name: "no nodes at all", want: P, nodes: map[api.Status]int32{}},
		{name: "expected nodes, no statuses yet", expected: []string{"a", "b"}, want: P,
			nodes: map[api.Status]int32{P: 2}, notReady: []string{"a", "b"}},
		{name: "all installed", expected: []string{"a", "b"}, got: []NodeState{st("a", D), st("b", D)}, want: D,
			nodes: map[api.Status]int32{D: 2}},
		{name: "all installed, expected from statuses", got: []NodeState{st("a", D), st("b", D)}, want: D,
			nodes: map[api.Status]int32{D: 2}},
		{name: "one installing holds the aggregate", expected: []string{"a", "b", "c"},
			got: []NodeState{st("a", D), st("b", I), st("c", D)}, want: I,
			nodes: map[api.Status]int32{D: 2, I: 1}, notReady: []string{"b"}},
		{name: "one pending below installing", got: []NodeState{st("a", I), st("b", P), st("c", D)}, want: P,
			nodes: map[api.Status]int32{D: 1, I: 1, P: 1}, notReady: []string{"b", "a"}},
		{name: "missing expected node counts as pending", expected: []string{"a", "b"}, got: []NodeState{st("a", D)}, want: P,
			nodes: map[api.Status]int32{D: 1, P: 1}, notReady: []string{"b"}},
		{name: "one failed node determines the aggregate", got: []NodeState{st("a", D), st("b", F), st("c", D), st("d", I)}, want: F,
			nodes: map[api.Status]int32{D: 2, F: 1, I: 1}, notReady: []string{"b", "d"}},
		{name: "one unsupported node determines the aggregate", got: []NodeState{st("a", D), st("b", U)}, want: U,
			nodes: map[api.Status]int32{D: 1, U: 1}, notReady: []string{"b"}},
		{name: "unsupported node and pending node", got: []NodeState{st("a", P), st("b", U)}, want: U,
			nodes: map[api.Status]int32{P: 1, U: 1}, notReady: []string{"b", "a"}},
		{name: "failed dominates unsupported", got: []NodeState{st("a", U), st("b", F), st("c", D)}, want: F,
			nodes: map[api.Status]int32{U: 1, F: 1, D: 1}, notReady: []string{"b", "a"}},
		{name: "all unsupported", got: []NodeState{st("a", U), st("b", U)}, want: U,
			nodes: map[api.Status]int32{U: 2}, notReady: []string{"a", "b"}},
		{name: "status of a node that is not expected is ignored", expected: []string{"a"},
			got: []NodeState{st("a", D), st("gone", F)}, want: D, nodes: map[api.Status]int32{D: 1}, ignored: 1},
		{name: "duplicate node keeps its lowest status", got: []NodeState{st("a", D), st("a", F)}, want: F,
			nodes: map[api.Status]int32{F: 1}, notReady: []string{"a"}},
		{name: "duplicate expected node counts once", expected: []string{"a", "a"}, got: []NodeState{st("a", D)}, want: D,
			nodes: map[api.Status]int32{D: 1}},
		{name: "unknown status ranks as pending", got: []NodeState{st("a", D), st("b", "Initializing")}, want: P,
			nodes: map[api.Status]int32{D: 1, P: 1}, notReady: []string{"b"}},
		{name: "empty expected list means no nodes", expected: []string{}, got: []NodeState{st("a", F)}, want: P,
			nodes: map[api.Status]int32{}, ignored: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Aggregate(c.expected, c.got)
			if r.Status != c.want {
				t.Errorf("status = %s, want %s", r.Status, c.want)
			}
			if !reflect.DeepEqual(r.Nodes, c.nodes) {
				t.Errorf("nodes = %v, want %v", r.Nodes, c.nodes)
			}
			var nr []string
			for _, s := range r.NotReady {
				nr = append(nr, s.Node)
			}
			if !reflect.DeepEqual(nr, c.notReady) {
				t.Errorf("notReady = %v, want %v", nr, c.notReady)
			}
			if r.Ignored != c.ignored {
				t.Errorf("ignored = %d, want %d", r.Ignored, c.ignored)
			}
		})
	}
}

func TestProfileStatusBoundsNotReady(t *testing.T) {
	var got []NodeState
	for i := 0; i < 5000; i++ {
		got = append(got, st(fmt.Sprintf("n%04d", i), api.Installing))
	}
	got[4321].Status = api.Failed
	ps := Aggregate(nil, got).ProfileStatus("p.json", 3)
	if ps.Status != api.Failed || len(ps.NotReady) != api.MaxNotReady || ps.NotReady[0] != "n4321" {
		t.Fatalf("status %s, notReady %v: want Failed, %d names, the failed node first", ps.Status, ps.NotReady, api.MaxNotReady)
	}
	if ps.Nodes[api.Installing] != 4999 || ps.Nodes[api.Failed] != 1 || ps.ObservedGeneration != 3 || ps.LocalhostProfile != "p.json" {
		t.Fatalf("unexpected %+v", ps)
	}
	c := ps.DeepCopy()
	c.Nodes[api.Failed] = 7
	c.NotReady[0] = "x"
	if ps.Nodes[api.Failed] != 1 || ps.NotReady[0] != "n4321" {
		t.Fatal("DeepCopy shares maps or slices")
	}
}

// While nodes only progress (Pending → Installing → Installed) at their own
// pace, the aggregate never goes back: no flapping (catalogue
// profiles/node-status/aggregate). Random interleavings of many nodes.
func TestAggregateDoesNotFlapWhileNodesProgress(t *testing.T) {
	progress := []api.Status{api.Pending, api.Installing, api.Installed}
	rng := rand.New(rand.NewSource(1))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.Intn(20)
		nodes := make([]string, n)
		step := make([]int, n)
		for i := range nodes {
			nodes[i] = fmt.Sprintf("node-%d", i)
		}
		// Nodes report only once they start; unreported nodes are Pending.
		reported := make([]bool, n)
		prev := api.Pending
		for {
			var movable []int
			for i := range step {
				if !reported[i] || step[i] < len(progress)-1 {
					movable = append(movable, i)
				}
			}
			if len(movable) == 0 {
				break
			}
			i := movable[rng.Intn(len(movable))]
			if !reported[i] {
				reported[i] = true
			} else {
				step[i]++
			}
			var got []NodeState
			for j := range nodes {
				if reported[j] {
					got = append(got, st(nodes[j], progress[step[j]]))
				}
			}
			cur := Aggregate(nodes, got).Status
			if cur.Rank() < prev.Rank() {
				t.Fatalf("trial %d: aggregate went back from %s to %s", trial, prev, cur)
			}
			if cur == api.Installed {
				for j := range nodes {
					if !reported[j] || progress[step[j]] != api.Installed {
						t.Fatalf("trial %d: Installed before node %s is", trial, nodes[j])
					}
				}
			}
			prev = cur
		}
		if prev != api.Installed {
			t.Fatalf("trial %d: final aggregate %s, want Installed", trial, prev)
		}
	}
}

func TestNodesIn(t *testing.T) {
	r := Aggregate(nil, []NodeState{st("a", api.Failed), st("b", api.Unsupported), st("c", api.Installed), st("d", api.Failed)})
	if got := r.NodesIn(api.Failed); !reflect.DeepEqual(got, []string{"a", "d"}) {
		t.Errorf("NodesIn(Failed) = %v", got)
	}
}

func TestSingleObjectLimit(t *testing.T) {
	p := api.Profile{Kind: api.KindSeccompProfile, Namespace: "ns", Name: "p", UID: "u", Content: "{}"}
	nodes := make([]string, 1000)
	for i := range nodes {
		nodes[i] = DefaultBenchNodeName(i)
	}
	size, per, max := singleObject(p, nodes)
	if size < 1000*30 || per < 30 || per > 60 {
		t.Fatalf("size %d, %.1f bytes/node", size, per)
	}
	// The predicted node count really passes the limit, one fewer does not.
	big := make([]string, max)
	for i := range big {
		big[i] = DefaultBenchNodeName(i)
	}
	if s, _, _ := singleObject(p, big); s <= EtcdLimit {
		t.Errorf("%d nodes: %d bytes, not above %d", max, s, EtcdLimit)
	}
	if s, _, _ := singleObject(p, big[:max-2]); s > EtcdLimit {
		t.Errorf("%d nodes: %d bytes, already above %d", max-2, s, EtcdLimit)
	}
}
