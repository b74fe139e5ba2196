// Package seccomp is the Ginkgo suite for every seccomp/* scenario of the
// catalogue (KEP-135, KEP-135 "Seccomp to GA").
//
// The specs register themselves with the harness when suites/e2e (the one
// test main, compiled into bin/skewproof-e2e.test) imports the package;
// they run against a real cluster only when SKEWPROOF_KUBECONFIG names its
// kubeconfig, otherwise the binary skips. API server rules run once per
// cluster, kubelet
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
// The environment the runner sets is named and described in package
// suites/env.
package seccomp
