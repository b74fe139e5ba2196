// Package apparmor is the Ginkgo suite for every apparmor/* scenario of the
// catalogue (KEP-24 "Add AppArmor Support").
//
// Like suites/seccomp it runs on k8s.io/kubernetes/test/e2e/framework
// through suites/internal/harness: API server rules once per cluster,
// kubelet rules once per worker node (pods pinned with nodeName), every
// assertion from the oracle (package skew) for the version pair and the
// node's host facts (AppArmor enabled or not), a verdict per spec (pass,
// deviation, fail, skip with reason) in the JUnit properties.
//
// The specs register themselves with the harness when suites/e2e imports
// the package; they run against a real cluster only with a run plan
// (SKEWPROOF_PLAN, package suites/env), whose nodes carry their AppArmor
// host fact as the node agent found it, or with SKEWPROOF_KUBECONFIG by
// hand (this machine's kernel facts then stand for every node's).
package apparmor
