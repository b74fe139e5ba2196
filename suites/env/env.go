// Package env is the contract between the runner ('skewproof run', the
// in-cluster entrypoint) and a suite process (bin/skewproof-e2e.test), in
// one place: what goes in (the run plan, a file named by PlanFile, and the
// -ginkgo.* flags), what comes out (a result line per spec on standard
// output), and what a spec declares about how it must be scheduled (the
// Label* constants). The runner writes and reads it; in a suite process the
// harness (suites/internal/harness) reads it, into its Env: a suite
// package reads only that.
package env

const (
	// PlanFile names the run plan (Plan, a JSON file) the runner wrote:
	// the cluster, its nodes and their facts, the node access, the agent
	// image, the run's id. Everything a suite process needs to know of the
	// run comes from it.
	PlanFile = "SKEWPROOF_PLAN"
	// Kubeconfig is, without PlanFile, the kubeconfig of a cluster for a
	// suite process run by hand: it makes the plan itself, as the runner
	// would, with this host's kernel facts for every node (without either,
	// and without Nodes, the binary skips).
	Kubeconfig = "SKEWPROOF_KUBECONFIG"
	// JUnit is the path of a JUnit file the process writes (optional, for
	// runs by hand: the runner reads the result lines instead).
	JUnit = "SKEWPROOF_JUNIT"
	// Workers is node,… : run kubelet rules on these nodes only (default:
	// every node of the plan that is not a control plane).
	Workers = "SKEWPROOF_WORKERS"
	// Nodes is name=version,… : a made-up cluster instead of a plan (with
	// APIServer), to list the specs without a cluster.
	Nodes = "SKEWPROOF_NODES"
	// APIServer is the API server version of the made-up cluster of Nodes.
	APIServer = "SKEWPROOF_APISERVER"
	// ScaleNodes is the number of simulated nodes of profiles/node-status/scale
	// (default 500).
	ScaleNodes = "SKEWPROOF_SCALE_NODES"
	// ProfilesDeleteCRDs: set to delete the profile CRDs after the profiles
	// suite.
	ProfilesDeleteCRDs = "SKEWPROOF_PROFILES_DELETE_CRDS"
)

// What a suite process prints on its standard output for the runner, the
// one channel of its results: a line ResultLinePrefix + the JSON of a
// reports.Result per finished spec (ResultLine, ParseResultLine), and
// SpecsDoneLine once its last spec has finished, before its suite-level
// clean-up (the agent's namespace, leftover namespaces), so that the
// runner may start what waited only for the specs. Its exit status says
// whether the process itself (set-up, clean-up) went well.
const (
	ResultLinePrefix = "SKEWPROOF-RESULT "
	SpecsDoneLine    = "SKEWPROOF-SPECS-DONE"
)

// RunLabel is the label every namespace and object of a run carries, with
// the value of RunID: the runner removes what carries it afterwards.
const RunLabel = "skewproof.io/run"

// Prefix is what every name above begins with.
const Prefix = "SKEWPROOF_"

// Scheduling labels: what a spec declares about how it must be run, as
// Ginkgo labels. The runner plans its processes from these and from the
// "node:<name>" label of kubelet rules, which it learns from a dry run of
// the binary (runner/schedule.go), and from nothing else of a spec: a new
// spec never edits the runner.
const (
	// LabelOwnProcess: the spec runs in a process apart from the other
	// specs of its node (of its suite, for a spec of no node).
	LabelOwnProcess = "schedule-own-process"
	// LabelSlow: the spec spends its time waiting on the kubelet (back-off
	// between restarts, retries); the slow specs of a node share a process
	// apart from the node's other specs, so that they wait side by side
	// (on a spec of no node it has no effect).
	LabelSlow = "schedule-slow"
	// LabelWaitsForGC: the spec waits for the garbage collector within a
	// time limit, so no LabelFloodsGC spec may run meanwhile.
	LabelWaitsForGC = "schedule-waits-for-gc"
	// LabelFloodsGC: the spec hands the garbage collector a backlog. It runs
	// in a process apart (with no other spec, so none of the others'
	// set-up), after every process that holds a LabelWaitsForGC spec has
	// finished its specs.
	LabelFloodsGC = "schedule-floods-gc"
)
