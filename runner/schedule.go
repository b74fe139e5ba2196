package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	senv "github.com/skewproof/skewproof/suites/env"
)

// The runner knows no spec: it learns the specs a run selects, with their
// labels, from a dry run of the suite binary (discover), and lays out its
// processes from the labels alone (plan): a suite's family label, the
// "node:<name>" label of kubelet rules and the scheduling labels the specs
// declare (suites/env: LabelOwnProcess, LabelSlow, LabelWaitsForGC,
// LabelFloodsGC).

// SpecLabels are the Ginkgo labels of one spec a run would run.
type SpecLabels []string

// nodeOf is the node a spec is declared for ("" for a spec of no node).
func (l SpecLabels) nodeOf() string {
	for _, s := range l {
		if n, ok := strings.CutPrefix(s, "node:"); ok {
			return n
		}
	}
	return ""
}

// discover lists the specs the run selects (its suites, label filter,
// focus and skip), with their labels, by a dry run of the suite binary in
// the suite processes' environment: the binary declares its kubelet rules
// per node as the real processes will.
func (o Options) discover(ctx context.Context, dir string, env []string) ([]SpecLabels, error) {
	report := filepath.Join(dir, fmt.Sprintf(".specs-%s.json", o.Name))
	defer func() { _ = os.Remove(report) }()
	args := append(SuiteArgs(strings.Join(o.Suites, " || "), o.LabelFilter, o.Focus, o.Skip),
		"-ginkgo.dry-run", "-ginkgo.json-report", report)
	cmd := exec.CommandContext(ctx, o.SuiteBinary, args...)
	cmd.Env = append(append(os.Environ(), env...), senv.JUnit+"="+os.DevNull)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("listing the specs to run (a dry run of %s): %w: %s", o.SuiteBinary, err, tail(string(out), 5))
	}
	specs, _, err := ReadDryRun(report)
	return specs, err
}

// ReadDryRun reads a dry run's Ginkgo JSON report: the labels of every
// spec it selected, and how many specs the binary has in all.
func ReadDryRun(path string) (selected []SpecLabels, total int, err error) {
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
				selected = append(selected, s.Labels())
			}
		}
	}
	return selected, total, nil
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

// plan lays out the suite processes of a run from the specs it selects.
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
func plan(suites []string, parallel bool, specs []SpecLabels) []job {
	var jobs []job
	if !parallel {
		// One after the other: within one process the specs of a suite run
		// one at a time, so nothing floods the garbage collector while a
		// spec waits for it.
		for i, s := range suites {
			j := job{suite: s, name: "all"}
			if i > 0 {
				j.after = []string{jobs[i-1].key()}
			}
			jobs = append(jobs, j)
		}
		return jobs
	}
	var gcWaiters []string
	var floods []int
	for _, s := range suites {
		// The groups: no node first ("api" beside nodes, else "main"),
		// then each node in the order its specs are declared.
		var nodes []string
		noNode := false
		for _, sp := range specs {
			if !slices.Contains(sp, s) {
				continue
			}
			if n := sp.nodeOf(); n == "" {
				noNode = true
			} else if !slices.Contains(nodes, n) {
				nodes = append(nodes, n)
			}
		}
		var groups []string
		if noNode {
			groups = append(groups, "")
		}
		groups = append(groups, nodes...)
		for _, g := range groups {
			name, filter := g, "node: containsAny "+g
			if g == "" {
				name, filter = "main", "node: isEmpty"
				if len(nodes) > 0 {
					name = "api"
				}
			}
			var in []SpecLabels
			for _, sp := range specs {
				if slices.Contains(sp, s) && sp.nodeOf() == g {
					in = append(in, sp)
				}
			}
			// Each part takes its specs; what no part takes is the rest.
			type share struct {
				name, filter string
				specs        []SpecLabels
			}
			var shares []share
			var taken []string
			left := in
			for _, pt := range parts {
				if pt.nodesOnly && g == "" {
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
			for _, sh := range shares {
				j := job{suite: s, name: name + "." + sh.name, filter: Select(filter, sh.filter)}
				if len(shares) == 1 {
					j.name = name
				}
				if slices.ContainsFunc(sh.specs, hasLabel(senv.LabelWaitsForGC)) {
					gcWaiters = append(gcWaiters, j.key())
				}
				if sh.name == "gc-flood" {
					floods = append(floods, len(jobs))
				}
				jobs = append(jobs, j)
			}
		}
	}
	for _, i := range floods {
		jobs[i].afterSpecs = slices.DeleteFunc(slices.Clone(gcWaiters), func(k string) bool { return k == jobs[i].key() })
	}
	return jobs
}

// JobFilters are the Ginkgo label filters of the suite processes a run
// starts (see plan) for the specs it selects, by process ("suite/name"):
// what each process is given with -ginkgo.label-filter when the run
// selects nothing further. The suites' tests check with them that the
// processes share out every spec exactly once.
func JobFilters(suites []string, parallel bool, specs []SpecLabels) map[string]string {
	out := map[string]string{}
	for _, j := range plan(suites, parallel, specs) {
		out[j.key()] = Select(j.suite, j.filter)
	}
	return out
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
