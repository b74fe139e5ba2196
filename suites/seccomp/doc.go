// Package seccomp is the Ginkgo suite for every seccomp/* scenario of the
// catalogue (KEP-135, KEP-135 "Seccomp to GA").
//
// The specs live in the package's test files and run against a real
// cluster only when SKEWPROOF_KUBECONFIG names its kubeconfig; without it
// `go test` skips the suite. API server rules run once per cluster, kubelet
// rules once per worker node (pods pinned with nodeName). Every spec asks
// the oracle (package skew) what the version pair must show, observes the
// cluster, and records a verdict (pass, deviation, fail, skip with reason)
// as JUnit test case properties.
//
// The specs run on k8s.io/kubernetes/test/e2e/framework: a framework
// instance per top-level Describe gives every spec its clients and a
// privileged namespace of its own, and the framework's pod helpers exec
// into containers and wait for pods. The framework is configured from the
// environment below, not from command-line flags.
//
// Environment:
//
//	SKEWPROOF_KUBECONFIG  kubeconfig of the cluster under test (required to run)
//	SKEWPROOF_JUNIT       path of the JUnit file to write (optional)
//	SKEWPROOF_CLUSTER     cluster name recorded in the JUnit file (optional)
//	SKEWPROOF_NODE_ACCESS "docker" (default when the node names are Docker
//	                      containers, e.g. kind) or "none": how profiles are
//	                      installed and removed on nodes by failure row 4
//	SKEWPROOF_PROFILES_INSTALLED  set (by the runner) when the profiles are
//	                      on the nodes already; otherwise the suite installs
//	                      them itself when it has node access
//	SKEWPROOF_WORKERS     node,… to run kubelet rules on these nodes only
//	                      (default: every Ready, schedulable node that is
//	                      not a control plane)
//	SKEWPROOF_NODES       name=version,… instead of asking the API (with
//	SKEWPROOF_APISERVER=version), to list the specs with --ginkgo.dry-run
//	                      without a cluster
package seccomp
