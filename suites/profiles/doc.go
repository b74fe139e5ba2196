// Package profiles is the Ginkgo suite for the profiles/* ids of the
// catalogue: profile distribution to nodes with per-node status objects and
// an aggregated status (the security-profiles-operator scalable-status design, the
// security-profiles-operator "scalable status" design).
//
// The specs register themselves with the harness when suites/e2e imports
// the package; they run against a real cluster only when
// SKEWPROOF_KUBECONFIG names its kubeconfig. Before its first spec that
// uses the agent (all but the scale bench) the suite builds the agent image
// from a static skewproof binary unless one is given, loads it into the
// nodes (kind: node containers are named like the nodes), deploys the agent
// DaemonSet and the aggregator into its own namespace, and removes all of it
// (namespace, cluster-scoped RBAC, admission policy) at the end; the CRDs
// stay unless SKEWPROOF_PROFILES_DELETE_CRDS is set: deleting and
// re-creating CRDs makes the garbage collector rebuild its monitors, and
// the specs rely on the garbage collector.
//
// The environment (kubeconfig, agent image, node access, keep, CRD
// removal, scale) is named and described in package suites/env.
package profiles
