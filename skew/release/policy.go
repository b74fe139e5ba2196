package release

import (
	"fmt"

	"github.com/hashicorp/go-version"
)

// threeMinorSkewSince is the first kube-apiserver minor whose kubelets may
// trail by three minors instead of two. KEP-3935 ("Support Oldest Node And
// Newest Control Plane") extended the kubelet skew in the version-skew policy
// starting with v1.28; before that kubelets could trail by two minors.
var threeMinorSkewSince = Minor{1, 28}

// MaxKubeletSkew returns how many minors a kubelet may trail the given
// kube-apiserver according to the upstream version-skew policy.
func MaxKubeletSkew(apiserver *version.Version) int {
	if MinorOf(apiserver).Less(threeMinorSkewSince) {
		return 2
	}
	return 3
}

// CheckSkew reports whether a kubelet may run against a kube-apiserver
// according to the upstream version-skew policy.
func CheckSkew(apiserver, kubelet *version.Version) error {
	if apiserver == nil || kubelet == nil {
		return fmt.Errorf("both a kube-apiserver and a kubelet version are required")
	}
	a, k := MinorOf(apiserver), MinorOf(kubelet)
	if a.Major != k.Major {
		return fmt.Errorf("kubelet v%s and kube-apiserver v%s differ in major version; use versions of the same major", kubelet, apiserver)
	}
	if a.Less(k) {
		return fmt.Errorf("kubelet v%s is newer than kube-apiserver v%s, which the version-skew policy forbids; use a kubelet of v%s or older", kubelet, apiserver, a)
	}
	max := MaxKubeletSkew(apiserver)
	if d := a.Minor - k.Minor; d > max {
		oldest := Minor{a.Major, a.Minor - max}
		return fmt.Errorf("kubelet v%s trails kube-apiserver v%s by %d minors, but the version-skew policy allows %d; use a kubelet of v%s or newer", kubelet, apiserver, d, max, oldest)
	}
	return nil
}

// KubeletMinors lists the kubelet minors the skew policy allows for the
// given kube-apiserver, oldest first.
func KubeletMinors(apiserver *version.Version) []Minor {
	a := MinorOf(apiserver)
	max := MaxKubeletSkew(apiserver)
	var out []Minor
	for m := a.Minor - max; m <= a.Minor; m++ {
		if m >= 0 {
			out = append(out, Minor{a.Major, m})
		}
	}
	return out
}
