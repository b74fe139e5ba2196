// Package profiles is the Ginkgo suite for the profiles/* ids of the
// catalogue: profile distribution to nodes with per-node status objects and
// an aggregated status (the security-profiles-operator "scalable status"
// design).
//
// The specs register themselves with the harness when suites/e2e imports
// the package, and are written on it like the other suites': the cluster,
// its nodes, the node access and the settings come from h.Env, node and
// pod commands go through h.NodeShell and h.PodExec, and each spec records
// its pass with h.RecordPass (these ids are skewproof's own rules, which
// the oracle does not judge). Before its first spec that uses the agent
// (all but the scale bench) the suite deploys the agent DaemonSet, from
// the agent image the runner built and loaded into the nodes
// (h.Env.AgentImage), and the aggregator into its own namespace, and
// removes all of it (namespace, cluster-scoped RBAC, admission policy) at
// the end unless the run keeps what it created; the CRDs stay unless
// SKEWPROOF_PROFILES_DELETE_CRDS is set: deleting and re-creating CRDs
// makes the garbage collector rebuild its monitors, and the specs rely on
// the garbage collector.
package profiles
