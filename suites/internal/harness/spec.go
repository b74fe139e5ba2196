package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/test/e2e/framework"
	admissionapi "k8s.io/pod-security-admission/api"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
)

// reportProgress prints one machine-readable line per finished spec; the
// runner turns them into live progress. SetUp registers it in every
// top-level Describe: a top-level ReportAfterEach would not survive the
// preview of the spec tree that framework.AfterReadingAllFlags makes
// (Ginkgo runs the suite from a copy that holds only containers and suite
// nodes).
func reportProgress(r SpecReport) {
	if DryRun() {
		return
	}
	if res, ok := reports.FromSpec(r); ok {
		fmt.Fprintln(os.Stdout, senv.ResultLine(res))
	}
}

// SpecLabels are the labels of every spec (docs/design.md conventions): the
// family, its level, the catalogue id ('/' is not allowed in Ginkgo labels,
// so "seccomp/kubelet/enforce" becomes "seccomp-kubelet-enforce") and, for
// kubelet rules, the node.
func SpecLabels(id string, nd *Node, extra ...string) Labels {
	parts := strings.Split(id, "/")
	l := Labels{parts[0], "LinuxOnly", IDLabel(id)}
	if len(parts) > 1 {
		if strings.HasPrefix(parts[len(parts)-1], "row-") {
			l = append(l, "failure-"+parts[len(parts)-1])
		} else {
			l = append(l, parts[1])
		}
	}
	if f := registered(skew.Family(id)); f != nil && f.Smoke[id] {
		l = append(l, "smoke")
	}
	if nd != nil {
		l = append(l, "kubelet", "node:"+nd.Name)
	} else {
		l = append(l, "api")
	}
	return append(l, extra...)
}

// IDLabel is the Ginkgo label of a catalogue id.
func IDLabel(id string) string { return strings.ReplaceAll(id, "/", "-") }

// SpecText is "[id] title [LinuxOnly]" plus the node for kubelet rules.
func SpecText(id, what string, nd *Node) string {
	s := fmt.Sprintf("[%s] %s [LinuxOnly]", id, what)
	if nd != nil {
		s += fmt.Sprintf(" [node:%s kubelet:v%s]", nd.Name, nd.Kubelet)
	}
	return s
}

// ruleIDs maps the label of every declared catalogue id back to the id
// (prepare finds a spec's id from its labels).
var ruleIDs = map[string]string{}

// scope is what the specs of one top-level Describe share: the framework
// instance, which gives every spec its clients and a namespace of its own,
// and the scenario of the running spec (the specs of one process run one
// at a time).
type scope struct {
	f *framework.Framework
	t *Scenario
}

// declaring is the scope of the Describe being built; APIRule and
// KubeletRule add their specs to it.
var declaring *scope

// SetUp comes first in every top-level Describe. It reports each finished
// spec's progress line. Its BeforeEach runs before the framework's: the
// oracle's expectation is recorded, and a spec the oracle skips is skipped,
// before the framework creates the namespace. The namespaces are
// privileged unless level says otherwise: specs run Unconfined containers
// and pin pods to nodes.
func SetUp(family string, level ...admissionapi.Level) {
	s := &scope{}
	BeforeEach(func() { s.t = prepare(CurrentSpecReport()) })
	Specs(family)
	s.f = framework.NewFramework("skewproof-"+family, framework.Options{ClientQPS: 50, ClientBurst: 100}, nil)
	s.f.NamespacePodSecurityLevel = admissionapi.LevelPrivileged
	if len(level) > 0 {
		s.f.NamespacePodSecurityLevel = level[0]
	}
	declaring = s
}

// declared checks a catalogue id and returns the scope of the Describe
// being built.
func declared(id string) (skew.Rule, *scope) {
	r, ok := skew.RuleByID(id)
	if !ok {
		panic("unknown catalogue id " + id)
	}
	if declaring == nil {
		panic("spec " + id + " declared outside a Describe that called SetUp")
	}
	ruleIDs[IDLabel(id)] = id
	return r, declaring
}

// APIRule declares a spec for an API server rule (once per cluster).
func APIRule(id string, body func(ctx context.Context, t *Scenario), decorators ...any) bool {
	r, s := declared(id)
	args := append([]any{SpecLabels(id, nil)}, decorators...)
	args = append(args, func(ctx SpecContext) { s.run(ctx, body) })
	It(SpecText(id, r.Title, nil), args...)
	return true
}

// KubeletRule declares one spec per worker node for a kubelet rule, on
// the workers that judge it (JudgedOn).
func KubeletRule(id string, body func(ctx context.Context, t *Scenario), decorators ...any) bool {
	r, s := declared(id)
	for i := range Env.Workers {
		nd := Env.Workers[i]
		if !JudgedOn(id, nd, Env.Workers) {
			continue
		}
		args := append([]any{SpecLabels(id, &nd)}, decorators...)
		args = append(args, func(ctx SpecContext) { s.run(ctx, body) })
		It(SpecText(id, r.Title, &nd), args...)
	}
	return true
}

// JudgedOn says whether the kubelet rule id is judged on worker nd of
// workers. Every worker judges it, except where a twin — another worker of
// the same kubelet version and container runtime, as the kind worker and
// the AppArmor node (User-Mode Linux) of one kubelet are — judges it for
// that kubelet:
//   - a rule the oracle skips for nd's host but not for the twin's is left
//     to the twin: the AppArmor enforcement rows to the AppArmor node, the
//     rows for hosts without AppArmor (KEP-24 AppArmor failure rows 5 and
//     6) to the kind worker, so that neither reports a skip for want of
//     what the other has;
//   - a seccomp rule is left by the AppArmor node to the kind worker: the
//     same kubelet asks the same runtime for the same filter, which the
//     kernel's seccomp applies alike on either (a run with both gave the
//     same verdict on both for all 13 seccomp kubelet ids,
//     docs/apparmor-node.md), and the AppArmor node's one slow CPU is kept
//     for AppArmor.
//
// A worker without a twin judges every rule, as it always did.
func JudgedOn(id string, nd Node, workers []Node) bool {
	for _, tw := range workers {
		if tw.Name == nd.Name || !tw.Kubelet.Equal(nd.Kubelet) || tw.Host.Runtime != nd.Host.Runtime || tw.Host.OCIRuntime != nd.Host.OCIRuntime {
			continue
		}
		if hostSkips(id, nd) && !hostSkips(id, tw) {
			return false
		}
		if strings.HasPrefix(id, "seccomp/") && nd.AppArmorKernel() && !tw.AppArmorKernel() {
			return false
		}
	}
	return true
}

// hostSkips says whether the oracle skips rule id on node nd for a fact of
// its host (skew.Expectation.Skip).
func hostSkips(id string, nd Node) bool {
	e, err := skew.Expect(id, Env.APIServer, nd.Kubelet, nd.Host)
	return err == nil && e.Skip != ""
}

// prepare asks the oracle about the spec (its catalogue id and node are
// among its labels), records the expectation and skips the spec when the
// oracle says so.
func prepare(r SpecReport) *Scenario {
	var id string
	var nd *Node
	for _, l := range r.Labels() {
		if v, ok := ruleIDs[l]; ok {
			id = v
		}
		if name, ok := strings.CutPrefix(l, "node:"); ok {
			for i := range Env.Workers {
				if Env.Workers[i].Name == name {
					nd = &Env.Workers[i]
				}
			}
			Expect(nd).NotTo(BeNil(), "spec %q: no worker %s", r.LeafNodeText, name)
		}
	}
	Expect(id).NotTo(BeEmpty(), "spec %q has no catalogue id label", r.LeafNodeText)
	kubelet, host := Env.Workers[0].Kubelet, Env.Workers[0].Host
	if nd != nil {
		kubelet, host = nd.Kubelet, nd.Host
	}
	e, err := skew.Expect(id, Env.APIServer, kubelet, host)
	Expect(err).NotTo(HaveOccurred(), "asking the oracle")
	t := &Scenario{ID: id, Node: nd, Exp: e, warn: &warnings{}}
	t.result = reports.Result{ID: id, APIServer: Env.APIServer.String(), Expected: reports.Describe(e.Expected),
		KEP: reports.Describe(e.KEPPlanned)}
	if nd != nil {
		t.result.Node, t.result.Kubelet = nd.Name, nd.Kubelet.String()
		t.result.CRIRuntime = strings.TrimSpace(nd.Host.Runtime + " " + nd.Host.RuntimeVersion)
		t.result.OCIRuntime = strings.TrimSpace(nd.Host.OCIRuntime + " " + nd.Host.OCIRuntimeVersion)
	}
	t.record()
	if nd != nil && nd.Untestable != "" {
		// Said before anything is created: the node cannot run the rule.
		t.SetUpMissing(nd.Untestable)
	}
	t.result.NotResearched = e.NotResearched
	t.result.RuntimeNotResearched = e.RuntimeNotResearched
	switch {
	case e.Skip != "":
		// The node's host cannot show the rule (or skewproof has not read
		// the release: NotResearched says that, and keeps it from green).
		t.SkipFor(reports.SkipHost, e.Skip)
	case e.Expected.NotApplicable != "":
		// The rule does not exist at these versions.
		t.SkipFor(reports.SkipRelease, e.Expected.NotApplicable)
	}
	if f := registered(skew.Family(id)); f != nil && f.Precondition != nil && Connected() {
		f.Precondition(context.Background(), t)
	}
	return t
}

// run runs a spec's body in the namespace the framework created for it,
// with a client that collects the API server's warnings.
func (s *scope) run(ctx context.Context, body func(context.Context, *Scenario)) {
	t := s.t
	t.F, t.NS, t.ctx = s.f, s.f.Namespace.Name, ctx
	cfg := s.f.ClientConfig()
	cfg.WarningHandler = t.warn
	var err error
	t.Client, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	body(ctx, t)
}

func (t *Scenario) record() { addResult(t.result) }

// addResult attaches a result entry to the running spec: the JUnit report
// and the progress line are made from its last one (reports.FromSpec).
func addResult(r reports.Result) {
	b, _ := json.Marshal(r)
	AddReportEntry(reports.EntryName, string(b), ReportEntryVisibilityNever)
}

// RecordPass records a pass for a spec of one of skewproof's own rules:
// catalogue ids the oracle does not judge (profiles/*), whose spec checks
// what it must with Gomega and, once it has, records what it saw
// (outcome), about node nd (nil: the cluster). A spec that fails after it
// is still reported fail. The oracle's rules are judged instead
// (Scenario.Judge): for one of those the spec fails.
func RecordPass(id string, nd *Node, outcome string) {
	r, err := ownPass(id, nd, outcome)
	Expect(err).NotTo(HaveOccurred())
	addResult(r)
}

// ownPass is RecordPass's result.
func ownPass(id string, nd *Node, outcome string) (reports.Result, error) {
	if _, ok := skew.RuleByID(id); ok {
		return reports.Result{}, fmt.Errorf("%s is a rule of the oracle: judge it (Scenario.Judge)", id)
	}
	r := reports.Result{ID: id, APIServer: Env.APIServer.String(), Verdict: skew.Pass, Outcome: outcome}
	if nd != nil {
		r.Node, r.Kubelet = nd.Name, nd.Kubelet.String()
	}
	return r, nil
}

// SetUpMissing stops the spec because something the scenario needs is not
// in the cluster. On a cluster skewproof brought up itself it put that
// there, so its absence is a broken set-up: the spec fails with the reason.
// On an existing cluster it is a fact of that cluster: the spec is skipped
// with the reason.
func (t *Scenario) SetUpMissing(reason string) {
	if Env.Own {
		t.result = setUpMissing(t.result, t.Node, reason, true)
		t.record()
		Fail(t.result.Failure)
	}
	t.SkipFor(reports.SkipCluster, reason)
}

// MissingSetUp is SetUpMissing for a spec of one of skewproof's own rules
// (RecordPass: the profiles suite), about node nd (nil: the cluster): the
// one own-cluster rule for every suite. What skewproof sets up itself on
// its own cluster (node access, runtime handlers, the agent and its image,
// the nodes) is never a reason to skip there: the spec fails.
func MissingSetUp(id string, nd *Node, reason string) {
	r := reports.Result{ID: id}
	if Env.APIServer != nil {
		r.APIServer = Env.APIServer.String()
	}
	if nd != nil {
		r.Node, r.Kubelet = nd.Name, nd.Kubelet.String()
	}
	r = setUpMissing(r, nd, reason, Env.Own)
	addResult(r)
	if r.Verdict == skew.Fail {
		Fail(r.Failure)
	}
	Skip(reason)
}

// setUpMissing is r stopped for want of reason: a failure of skewproof's
// own set-up on its own cluster (own), else a skip with the reason.
func setUpMissing(r reports.Result, nd *Node, reason string, own bool) reports.Result {
	if !own {
		r.Verdict, r.Reason, r.SkipKind = skew.Skip, reason, reports.SkipCluster
		return r
	}
	r.Verdict, r.Reason = skew.Fail, "skewproof's own set-up is broken"
	r.Failure = fmt.Sprintf("%s on %s: %s (skewproof set this up on its own cluster)", r.ID, where(nd), reason)
	return r
}

// Skip records a skip for a fact of the cluster under test (its
// configuration, what it lets skewproof do) with its reason and stops the
// spec; SkipFor names another kind of fact.
func (t *Scenario) Skip(reason string) { t.SkipFor(reports.SkipCluster, reason) }

// SkipFor records a skip for a fact of the kind given (reports.SkipRelease,
// SkipHost, SkipCluster) with its reason and stops the spec. A
// certification run accepts only skips for a fact of the release.
func (t *Scenario) SkipFor(kind, reason string) {
	t.result.Verdict, t.result.Reason, t.result.SkipKind = skew.Skip, reason, kind
	t.record()
	Skip(reason)
}
