// Package nestednode holds the half of the AppArmor-host test
// (clusters.TestIntegrationAppArmorHost) that runs inside a nested kind
// node: a node container started on a kernel that enforces AppArmor, with
// the mounts skewproof gives kind nodes on such a host. The outer test
// compiles this test binary and runs it in that node; on its own (without
// SKEWPROOF_NESTED_NODE) it skips.
package nestednode
