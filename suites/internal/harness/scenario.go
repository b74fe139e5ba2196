package harness

import (
	"context"
	"fmt"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/test/e2e/framework"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// RunID is the id of this run (namespaces and objects carry it as
// senv.RunLabel), so that leftovers can be found: the plan's.
func RunID() string { return Env.Plan.RunID }

// processID marks the namespaces of this process: several suite processes
// of one run (same runID) must not delete each other's namespaces.
var processID = rand.String(8)

// Labels of the objects the suites create.
const (
	SuiteLabel   = "skewproof.io/suite"
	ProcessLabel = "skewproof.io/process"
)

// warnings collects the API server's warnings of one spec's requests.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// take returns and forgets the warnings collected so far.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// Scenario is one spec's context: the oracle's expectation, the framework
// and its namespace, a client that collects warnings, the node for kubelet
// rules.
type Scenario struct {
	ID     string
	Node   *Node
	Exp    skew.Expectation
	F      *framework.Framework
	NS     string
	Client kubernetes.Interface
	warn   *warnings
	result reports.Result
	// ctx is the spec's context, for what Judge still observes (the
	// effects of the containers' profiles, ProveEffects).
	ctx context.Context
	// probed holds, per container observed running, what the effect
	// probes run with the read of its PID 1 did (ObserveContainer, tryIn).
	probedMu sync.Mutex
	probed   map[*observe.Container]map[Probe]probeRun
}

// NodeName is the scenario's node ("" for API rules).
func (t *Scenario) NodeName() string {
	if t.Node == nil {
		return ""
	}
	return t.Node.Name
}

// createTestingNS is the framework's namespace creation with the labels of
// this run and process added.
func createTestingNS(ctx context.Context, baseName string, c kubernetes.Interface, labels map[string]string) (*corev1.Namespace, error) {
	if labels == nil {
		labels = map[string]string{}
	}
	labels[SuiteLabel], labels[senv.RunLabel], labels[ProcessLabel] = strings.TrimPrefix(baseName, "skewproof-"), RunID(), processID
	return framework.CreateTestingNS(ctx, baseName, c, labels)
}

// AppArmorFields says whether the API server has the appArmorProfile
// fields (skew.AppArmorFieldsAt); before, a scenario expresses a profile by
// annotation.
func (t *Scenario) AppArmorFields() bool { return skew.AppArmorFieldsAt(Env.APIServer) }

// Pods is the pod client of the spec's namespace (reads; writes whose
// warnings are observed go through t.Client).
func (t *Scenario) Pods() *e2epod.PodClient { return e2epod.NewPodClient(t.F) }

// DeleteLeftovers removes the namespaces this process created and did not
// remove (a spec interrupted half-way); never another process's.
func DeleteLeftovers(ctx context.Context) {
	nl, err := Env.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: ProcessLabel + "=" + processID})
	if err == nil {
		for _, ns := range nl.Items {
			_ = Env.Client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		}
	}
}

// Sub is one sub-case of a scenario: what was observed and, for sub-cases
// other than the canonical one, which part of the oracle's observation
// applies to it.
type Sub struct {
	Name string
	Obs  observe.Observation
	// Want derives the sub-case's expectation from the oracle's; nil means
	// the whole observation (with MessageContains split per sub-case).
	Want func(skew.Observation) skew.Observation
	// Must lists what the sub-case must show regardless of version (facts of
	// the fixture itself, e.g. "the deny-mkdir profile makes mkdir fail");
	// each entry is a failed check.
	Must []string
	// Unmade, when set, is a check of the sub-case that could not be made:
	// the spec cannot pass. Judge fails it if the checks that were made
	// fail; otherwise it stops the spec as Unmade says.
	Unmade *Unmade
}

// Unmade is a check that could not be made, and why.
type Unmade struct {
	Reason string
	// SetUp: what the check needed is something skewproof sets up on its
	// own clusters (a pod it runs, a runtime handler, …): the spec fails
	// there and is skipped elsewhere (SetUpMissing). Otherwise the host or
	// the cluster cannot show it: the spec is skipped with the reason.
	SetUp bool
}

// Generic keeps the parts of an observation that hold for every sub-case:
// admission and absent fields and annotations.
func Generic(o skew.Observation) skew.Observation {
	return skew.Observation{Summary: o.Summary, NotApplicable: o.NotApplicable, Admission: o.Admission,
		MessageContains: o.MessageContains, AbsentFields: o.AbsentFields, AbsentAnnotations: o.AbsentAnnotations}
}

// AdmissionOnly keeps the admission and the rejection messages.
func AdmissionOnly(o skew.Observation) skew.Observation {
	return skew.Observation{Summary: o.Summary, NotApplicable: o.NotApplicable, Admission: o.Admission, MessageContains: o.MessageContains}
}

// Nothing expects nothing from the oracle: the sub-case is judged by its
// Must checks only.
func Nothing(skew.Observation) skew.Observation { return skew.Observation{} }

// want is what sub-case i of n must show: the sub-case's Want of the
// oracle's observation, then, where the oracle gives one message fragment
// per sub-case (as many as there are sub-cases), the i-th. A Want that
// picks a fragment itself (Fragment) picks from the oracle's whole list:
// the v1.29 update/immutable scenario has three sub-cases and three
// fragments, in another order.
func (s Sub) want(o skew.Observation, i, n int) skew.Observation {
	if s.Want != nil {
		o = s.Want(o)
	}
	if len(o.MessageContains) == n && n > 1 {
		o.MessageContains = []string{o.MessageContains[i]}
	}
	return o
}

// Judge probes the effects the oracle names for the sub-cases' running
// containers (ProveEffects), compares the sub-cases with the oracle, records the verdict and
// fails the spec when the verdict is fail. A check that could not be made
// (Sub.Unmade) never leaves a pass or a deviation: unless the checks that
// were made fail, the spec stops with the reason (skipped, or failed where
// skewproof's own set-up is what is missing).
func (t *Scenario) Judge(subs ...Sub) {
	ctx := t.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	t.ProveEffects(ctx, subs...)
	r, stop := judge(t.ID, t.Node, t.Exp, t.result, subs)
	t.result = r
	if stop != nil {
		if stop.SetUp {
			t.SetUpMissing(stop.Reason)
		}
		t.Skip(stop.Reason)
	}
	t.record()
	if t.result.Verdict == skew.Fail {
		Fail(t.result.Failure)
	}
}

// judge is Judge without Ginkgo: the result of comparing the sub-cases
// with the expectation (r carries what prepare recorded), and, when checks
// could not be made and those that were made did not fail, why the spec
// must stop instead of passing. No sub-case means nothing was observed: a
// failure, never a pass.
func judge(id string, nd *Node, exp skew.Expectation, r reports.Result, subs []Sub) (reports.Result, *Unmade) {
	if len(subs) == 0 {
		r.Verdict, r.Reason = skew.Fail, exp.Reason
		r.Failure = fmt.Sprintf("%s on %s: judged with no observation", id, where(nd))
		return r, nil
	}
	var kepMis, upMis, must, observed, outcomes, unmade []string
	unmadeSetUp := false
	for i, s := range subs {
		if s.Unmade != nil {
			unmade = append(unmade, s.Name+": "+s.Unmade.Reason)
			unmadeSetUp = unmadeSetUp || s.Unmade.SetUp
		}
		// An effect of the profile that could not be probed either way.
		reasons, setUp := observe.UnmadeEffects(s.Obs.Container)
		for _, why := range reasons {
			unmade = append(unmade, s.Name+": effect of "+why)
		}
		unmadeSetUp = unmadeSetUp || setUp
		for _, m := range observe.Match(s.want(exp.KEPPlanned, i, len(subs)), s.Obs) {
			kepMis = append(kepMis, s.Name+": "+m)
		}
		for _, m := range observe.Match(s.want(exp.Expected, i, len(subs)), s.Obs) {
			upMis = append(upMis, s.Name+": "+m)
		}
		for _, m := range s.Must {
			must = append(must, s.Name+": "+m)
		}
		observed = append(observed, s.Name+": "+s.Obs.Summary())
		if s.Obs.Container != nil {
			outcomes = append(outcomes, s.Name+": "+s.Obs.Container.String())
		}
	}
	v := exp.Verdict(len(kepMis) == 0 && len(must) == 0, len(upMis) == 0 && len(must) == 0)
	r.Verdict = v
	r.Observed = strings.Join(observed, " | ")
	r.Outcome = strings.Join(outcomes, "; ")
	switch v {
	case skew.Pass:
		r.Reason = "matches the KEP: " + exp.Reason
	case skew.Deviation:
		r.Reason = "known upstream deviation: " + exp.Reason
		if len(kepMis) > 0 {
			r.Outcome = strings.TrimPrefix(r.Outcome+"; differs from the KEP plan: "+strings.Join(kepMis, "; "), "; ")
		}
	case skew.Skip:
		// The oracle skips the rule (prepare stops such a spec first): no
		// verdict can come from this observation.
		r.Verdict, r.Reason = skew.Fail, exp.Reason
		r.Failure = fmt.Sprintf("%s on %s: judged although the oracle skips it: %s%s", id, where(nd), exp.Skip, exp.Expected.NotApplicable)
	case skew.Fail:
		all := append(must, upMis...)
		r.Reason = exp.Reason
		r.Failure = fmt.Sprintf("%s on %s: observation matches neither the KEP nor upstream v%s\nexpected: %s\nmismatches:\n  %s\nobserved: %s",
			id, where(nd), exp.Version, reports.Describe(exp.Expected), strings.Join(all, "\n  "), r.Observed)
		// The kubelet's messages say whether the runtime refused a
		// container or only failed under load (a timeout, say).
		for _, s := range subs {
			if c := s.Obs.Container; c != nil && c.Message != "" {
				r.Failure += "\ncontainer message: " + s.Name + ": " + c.Message
			}
		}
	}
	if note := reports.StagedNote(r); note != "" && (r.Verdict == skew.Pass || r.Verdict == skew.Deviation) {
		// Never a plain pass: the observation is of skewproof's staging.
		r.Reason = note + "; " + r.Reason
	}
	if r.Verdict != skew.Fail && len(unmade) > 0 {
		return r, &Unmade{Reason: "a check could not be made: " + strings.Join(unmade, "; "), SetUp: unmadeSetUp}
	}
	return r, nil
}

func where(nd *Node) string {
	if nd == nil {
		return "the API server"
	}
	return fmt.Sprintf("node %s (kubelet v%s)", nd.Name, nd.Kubelet)
}

// DescribeOutcome names the allowed outcome (of the oracle's AnyOf) that
// the container showed.
func DescribeOutcome(alts []skew.ContainerOutcome, c *observe.Container) string {
	if c == nil {
		return ""
	}
	if i := observe.WhichOf(alts, *c); i >= 0 {
		return "allowed outcome: " + alts[i].Note
	}
	return "none of the allowed outcomes"
}

// Fragment keeps the admission and the i-th rejection message fragment of
// the oracle's observation (for a sub-case that shows one of several).
func Fragment(i int) func(skew.Observation) skew.Observation {
	return func(o skew.Observation) skew.Observation {
		a := AdmissionOnly(o)
		if i < len(o.MessageContains) {
			a.MessageContains = []string{o.MessageContains[i]}
		}
		return a
	}
}

// AdmittedInstead is for a sub-case the rule's own statement says is
// admitted where its canonical case is rejected (e.g. the valid values of
// apparmor/api/annotation-values): only the admission is asserted.
func AdmittedInstead(o skew.Observation) skew.Observation {
	return skew.Observation{Summary: o.Summary, NotApplicable: o.NotApplicable, Admission: skew.Accepted}
}
