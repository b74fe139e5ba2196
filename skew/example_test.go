package skew_test

import (
	"fmt"

	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
)

// A spec asks the oracle what to expect for the cluster it runs against,
// asserts the observation against Expected, and classifies the result with
// Verdict.
func ExampleExpect() {
	apiserver, _ := release.ParseVersion("v1.37.2")
	kubelet, _ := release.ParseVersion("1.34.4")
	host := skew.HostFacts{AppArmor: false, Seccomp: true, Runtime: "containerd"}

	e, err := skew.Expect("apparmor/failure/row-5", apiserver, kubelet, host)
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Component, e.Version, e.Expected.Container.State, e.Expected.Container.Reason)
	fmt.Println("KEP plan:", e.KEPPlanned.Container.State, "deviation:", e.Deviation)
	// The spec saw the pod rejected by the kubelet: upstream, not the plan.
	fmt.Println(e.Verdict(false, true))
	// Output:
	// kubelet 1.34.4 rejected-by-kubelet AppArmor
	// KEP plan: blocked deviation: true
	// deviation
}
