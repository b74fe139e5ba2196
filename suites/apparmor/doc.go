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
// the package; they run against a real cluster only when
// SKEWPROOF_KUBECONFIG names its kubeconfig (package suites/env names the
// environment), plus
// SKEWPROOF_APPARMOR_NODES (node=true|false,…) to state a node's AppArmor
// host fact when this process cannot see that node's kernel.
package apparmor
