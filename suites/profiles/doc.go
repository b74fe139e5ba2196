// Package profiles is the Ginkgo suite for the profiles/* ids of the
// catalogue: profile distribution to nodes with per-node status objects and
// an aggregated status (the security-profiles-operator scalable-status design, the
// security-profiles-operator "scalable status" design).
//
// The specs run against a real cluster only when SKEWPROOF_KUBECONFIG names
// its kubeconfig; without it `go test` skips the suite. The suite builds the
// agent image from a static skewproof binary, loads it into the nodes
// (kind: node containers are named like the nodes), deploys the agent
// DaemonSet and the aggregator into its own namespace, and removes all of it
// (namespace, cluster-scoped RBAC, admission policy) at the end; the CRDs
// stay unless SKEWPROOF_PROFILES_DELETE_CRDS is set: deleting and
// re-creating CRDs makes the garbage collector rebuild its monitors, and
// the specs rely on the garbage collector.
//
// Environment:
//
//	SKEWPROOF_KUBECONFIG  kubeconfig of the cluster under test (required to run)
//	SKEWPROOF_JUNIT       path of the JUnit file to write (optional)
//	SKEWPROOF_CLUSTER     cluster name recorded in the JUnit file (optional)
//	SKEWPROOF_BINARY      static skewproof binary for the agent image
//	                      (default: built with CGO_ENABLED=0 go build)
//	SKEWPROOF_AGENT_IMAGE an agent image already present on every node
//	                      (then nothing is loaded; for clusters without docker access)
//	SKEWPROOF_AGENT_IMAGE_NOTE  why that image has no apparmor_parser, if it has none
//	                      (the parser specs then skip with this reason)
//	SKEWPROOF_NODE_ACCESS "docker" (default when node names are Docker
//	                      containers) or "none": fault injection and file
//	                      checks need "docker" and are skipped otherwise
//	SKEWPROOF_KEEP        leave the agent deployed after the suite
//	SKEWPROOF_PROFILES_DELETE_CRDS  also delete the CRDs at the end
//	SKEWPROOF_SCALE_NODES simulated nodes of the scale spec (default 500;
//	                      the 5,000-node figures come from 'skewproof profiles scale')
package profiles
