// Package schedule lays out the suite processes of a run from the specs it
// selects: the labels a dry run of the suite binary lists (ReadDryRun),
// never a spec by name. The runner starts the processes; this package only
// plans them, so that the suites' own tests can check the plan against the
// real binary without linking the runner.
package schedule

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	senv "github.com/skewproof/skewproof/suites/env"
)

// SpecLabels are the Ginkgo labels of one spec a run would run.
type SpecLabels []string

// Node is the node a spec is declared for ("" for a spec of no node).
func (l SpecLabels) Node() string {
	for _, s := range l {
		if n, ok := strings.CutPrefix(s, "node:"); ok {
			return n
		}
	}
	return ""
}

// TestName is the Go test function of the e2e binary.
const TestName = "TestE2E"

// Job is one suite process: its suite, its name within the suite ("all",
// "api", a worker, a worker's shard, "main", "scale"), the Ginkgo label
// filter of its part, the jobs that must have finished before it starts
// (keys), and the jobs whose specs must have finished (afterSpecs: their
// process printed senv.SpecsDoneLine, or ended) — their clean-up may
// still be running.
type Job struct {
	Suite, Name, Filter string
	After, AfterSpecs   []string
	// Node is the node whose specs the job runs ("" for specs of no node).
	Node string
}

// Key names the job: "suite/name".
func (j Job) Key() string { return j.Suite + "/" + j.Name }

// Select joins Ginkgo label filters (the selections of a run) with &&,
// leaving out empty ones.
func Select(filters ...string) string {
	var parts []string
	for _, f := range filters {
		if f != "" {
			parts = append(parts, "("+f+")")
		}
	}
	if len(parts) == 1 {
		return strings.TrimSuffix(strings.TrimPrefix(parts[0], "("), ")")
	}
	return strings.Join(parts, " && ")
}

// SuiteArgs are the e2e binary's arguments for the specs of one suite
// (its family label) and a selection.
func SuiteArgs(suite, labelFilter, focus, skip string) []string {
	args := []string{"-test.run", "^" + TestName + "$", "-test.v", "-ginkgo.no-color", "-ginkgo.v",
		"-ginkgo.label-filter", Select(suite, labelFilter)}
	if focus != "" {
		args = append(args, "-ginkgo.focus", focus)
	}
	if skip != "" {
		args = append(args, "-ginkgo.skip", skip)
	}
	return args
}

// Spec is one spec a run would run, as a dry run lists it: its full text
// (the name its result line carries) and its labels.
type Spec struct {
	Text   string
	Labels SpecLabels
}

// ReadDryRun reads a dry run's Ginkgo JSON report: the labels of every
// spec it selected, and how many specs the binary has in all.
func ReadDryRun(path string) (selected []SpecLabels, total int, err error) {
	specs, total, err := ReadDryRunSpecs(path)
	for _, s := range specs {
		selected = append(selected, s.Labels)
	}
	return selected, total, err
}

// ReadDryRunSpecs reads a dry run's Ginkgo JSON report: every spec it
// selected, with its text and labels, and how many specs the binary has in
// all.
func ReadDryRunSpecs(path string) (selected []Spec, total int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	var rs []types.Report
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, 0, fmt.Errorf("reading the dry run's report %s: %w", path, err)
	}
	for _, r := range rs {
		for _, s := range r.SpecReports {
			if s.LeafNodeType != types.NodeTypeIt {
				continue
			}
			total++
			// Specs the selection leaves out are listed as skipped.
			if s.State == types.SpecStatePassed {
				selected = append(selected, Spec{Text: s.FullText(), Labels: s.Labels()})
			}
		}
	}
	return selected, total, nil
}

// Of are the specs of specs that a job's process selects: those of its
// suite that its label filter matches (the run's own selection already
// made the list).
func (j Job) Of(specs []Spec) ([]Spec, error) {
	f, err := types.ParseLabelFilter(Select(j.Suite, j.Filter))
	if err != nil {
		return nil, fmt.Errorf("the label filter of process %s: %w", j.Key(), err)
	}
	var out []Spec
	for _, s := range specs {
		if f(s.Labels) {
			out = append(out, s)
		}
	}
	return out, nil
}

// part is one process's share of a group (the specs of one node, or of no
// node) of a suite: its name and the label filter that selects it within
// the group.
type part struct {
	name, filter string
	has          func(SpecLabels) bool
	nodesOnly    bool // a part of a node's group only
}

func hasLabel(l string) func(SpecLabels) bool {
	return func(s SpecLabels) bool { return slices.Contains(s, l) }
}

// parts are the processes a group is split into, in the order they start:
// each takes the specs its filter selects that no earlier part took, and
// "rest" every spec left. A part that selects no spec of the run has no
// process.
var parts = []part{
	{name: "gc-flood", filter: senv.LabelFloodsGC, has: hasLabel(senv.LabelFloodsGC)},
	{name: "own", filter: senv.LabelOwnProcess, has: hasLabel(senv.LabelOwnProcess)},
	{name: "slow", filter: senv.LabelSlow, has: hasLabel(senv.LabelSlow), nodesOnly: true},
}

// Plan lays out the suite processes of a run from the specs it selects.
// Without parallel, every suite runs in one process, one suite after the
// other. With it, the suites run at the same time, each group of a suite
// (its specs of no node, and each node's) in processes of its own, split
// by the specs' scheduling labels (parts). They share the nodes without
// touching each other's objects: every spec has its own namespace, the
// seccomp and AppArmor specs use the fixture profiles and static pods of
// the fixtures namespace (row 4 a profile name per node), the profiles
// suite its own agent, namespace and profile names, and its fault
// injection a directory of its own namespace. A process of LabelFloodsGC
// specs starts once every process holding a LabelWaitsForGC spec has
// finished its specs (their clean-up may still run).
func Plan(suites []string, parallel bool, specs []SpecLabels) []Job {
	if !parallel {
		return sequential(suites)
	}
	var jobs []Job
	var gcWaiters []string
	var floods []int
	for _, s := range suites {
		for _, g := range groupsOf(s, specs) {
			shares := shareOut(g)
			for _, sh := range shares {
				j := Job{Suite: s, Name: g.name + "." + sh.name, Filter: Select(g.filter, sh.filter), Node: g.node}
				if len(shares) == 1 {
					j.Name = g.name
				}
				if slices.ContainsFunc(sh.specs, hasLabel(senv.LabelWaitsForGC)) {
					gcWaiters = append(gcWaiters, j.Key())
				}
				if sh.name == "gc-flood" {
					floods = append(floods, len(jobs))
				}
				jobs = append(jobs, j)
			}
		}
	}
	for _, i := range floods {
		jobs[i].AfterSpecs = slices.DeleteFunc(slices.Clone(gcWaiters), func(k string) bool { return k == jobs[i].Key() })
	}
	return jobs
}

// OneAtATime makes the jobs of each of nodes run one after the other,
// across suites, in the order Plan gives them: a node with one slow CPU (the
// User-Mode Linux node of --apparmor-node) is not handed several suite
// processes' pods and execs at once, which can starve its kubelet until it
// stops posting its status.
func OneAtATime(jobs []Job, nodes ...string) []Job {
	last := map[string]string{}
	out := slices.Clone(jobs)
	for i, j := range out {
		if j.Node == "" || !slices.Contains(nodes, j.Node) {
			continue
		}
		if prev, ok := last[j.Node]; ok {
			out[i].After = append(slices.Clone(j.After), prev)
		}
		last[j.Node] = j.Key()
	}
	return out
}

// sequential is one process per suite, one after the other: within one
// process the specs of a suite run one at a time, so nothing floods the
// garbage collector while a spec waits for it.
func sequential(suites []string) []Job {
	var jobs []Job
	for i, s := range suites {
		j := Job{Suite: s, Name: "all"}
		if i > 0 {
			j.After = []string{jobs[i-1].Key()}
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// group is the specs of a suite on one node, or on none.
type group struct {
	name, filter string
	node         string // "": the specs of no node
	specs        []SpecLabels
}

// groupsOf are a suite's groups: no node first ("api" beside nodes, else
// "main"), then each node in the order its specs are declared.
func groupsOf(suite string, specs []SpecLabels) []group {
	var nodes []string
	noNode := false
	for _, sp := range specs {
		if !slices.Contains(sp, suite) {
			continue
		}
		if n := sp.Node(); n == "" {
			noNode = true
		} else if !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	var out []group
	if noNode {
		name := "main"
		if len(nodes) > 0 {
			name = "api"
		}
		out = append(out, group{name: name, filter: "node: isEmpty"})
	}
	for _, n := range nodes {
		out = append(out, group{name: n, filter: "node: containsAny " + n, node: n})
	}
	for i := range out {
		for _, sp := range specs {
			if slices.Contains(sp, suite) && sp.Node() == out[i].node {
				out[i].specs = append(out[i].specs, sp)
			}
		}
	}
	return out
}

// share is what one process of a group runs.
type share struct {
	name, filter string
	specs        []SpecLabels
}

// shareOut gives each part its specs of the group; what no part takes is
// the rest.
func shareOut(g group) []share {
	var shares []share
	var taken []string
	left := g.specs
	for _, pt := range parts {
		if pt.nodesOnly && g.node == "" {
			continue
		}
		var mine, rest []SpecLabels
		for _, sp := range left {
			if pt.has(sp) {
				mine = append(mine, sp)
			} else {
				rest = append(rest, sp)
			}
		}
		f := pt.filter
		if len(taken) > 0 {
			f = Select(f, "!("+strings.Join(taken, " || ")+")")
		}
		taken = append(taken, pt.filter)
		left = rest
		if len(mine) > 0 {
			shares = append(shares, share{pt.name, f, mine})
		}
	}
	if len(left) > 0 {
		f := ""
		if len(shares) > 0 {
			f = "!(" + strings.Join(taken, " || ") + ")"
		}
		shares = append(shares, share{"rest", f, left})
	}
	return shares
}

// JobFilters are the Ginkgo label filters of the suite processes a run
// starts (see Plan) for the specs it selects, by process ("suite/name"):
// what each process is given with -ginkgo.label-filter when the run
// selects nothing further. The suites' tests check with them that the
// processes share out every spec exactly once.
func JobFilters(suites []string, parallel bool, specs []SpecLabels) map[string]string {
	out := map[string]string{}
	for _, j := range Plan(suites, parallel, specs) {
		out[j.Key()] = Select(j.Suite, j.Filter)
	}
	return out
}
