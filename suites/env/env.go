// Package env names the environment through which the runner ('skewproof
// run', the in-cluster entrypoint) configures a suite process
// (bin/skewproof-e2e.test). It is the one place these names are spelled;
// the runner sets them and the suites' harness (suites/internal/harness)
// reads each of them in one place, into its Env: a suite package reads
// only that.
package env

const (
	// Kubeconfig is the kubeconfig of the cluster under test (required to
	// run specs; without it and without Nodes the binary skips).
	Kubeconfig = "SKEWPROOF_KUBECONFIG"
	// JUnit is the path of the JUnit file the process writes (optional).
	JUnit = "SKEWPROOF_JUNIT"
	// Cluster is the cluster name recorded in the JUnit file (optional).
	Cluster = "SKEWPROOF_CLUSTER"
	// NodeAccess is "docker" (the nodes are local containers: node files
	// can be read and changed directly) or "none"; guessed when unset.
	NodeAccess = "SKEWPROOF_NODE_ACCESS"
	// RunID labels every namespace and object the run creates
	// (skewproof.io/run), so that leftovers can be found and removed.
	RunID = "SKEWPROOF_RUN_ID"
	// Workers is node,… : run kubelet rules on these nodes only (default:
	// every Ready, schedulable node that is not a control plane).
	Workers = "SKEWPROOF_WORKERS"
	// Nodes is name=version,… : a made-up cluster instead of asking the API
	// server (with APIServer), to list the specs without a cluster.
	Nodes = "SKEWPROOF_NODES"
	// APIServer is the API server version of the made-up cluster of Nodes.
	APIServer = "SKEWPROOF_APISERVER"
	// AppArmorNodes overrides the AppArmor host fact per node
	// (node=true|false,…), as the node agent reported it.
	AppArmorNodes = "SKEWPROOF_APPARMOR_NODES"
	// AgentImage is the node agent image present on every node (the
	// profiles suite deploys it).
	AgentImage = "SKEWPROOF_AGENT_IMAGE"
	// AgentImageNote says why AgentImage has no apparmor_parser (empty: it
	// has one).
	AgentImageNote = "SKEWPROOF_AGENT_IMAGE_NOTE"
	// Keep: set to keep what the suites created (namespaces, the profiles
	// suite's agent).
	Keep = "SKEWPROOF_KEEP"
	// ScaleNodes is the number of simulated nodes of profiles/node-status/scale
	// (default 500).
	ScaleNodes = "SKEWPROOF_SCALE_NODES"
	// ProfilesDeleteCRDs: set to delete the profile CRDs after the profiles
	// suite.
	ProfilesDeleteCRDs = "SKEWPROOF_PROFILES_DELETE_CRDS"
	// OwnCluster is "1" when the runner brought the cluster up itself (not
	// --kubeconfig): what skewproof set up there (RuntimeClasses, runtime
	// handlers, the node agent, readable metrics) is never a reason to skip
	// a spec; its absence fails the spec.
	OwnCluster = "SKEWPROOF_OWN_CLUSTER"
	// UntestableNodes is a JSON object {"node": "why", …}: nodes whose
	// kubelet rules cannot run (not Ready; on an own cluster also
	// cordoned), as the runner found them before deploying anything. Their
	// kubelet specs are reported fail (OwnCluster) or skip with the reason.
	// Unset: the suites check the nodes' Ready condition themselves.
	UntestableNodes = "SKEWPROOF_UNTESTABLE_NODES"
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
