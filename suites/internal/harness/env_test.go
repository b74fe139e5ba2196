package harness

import (
	"testing"

	"github.com/skewproof/skewproof/skew"
)

// TestHostFactsRuntime: the node's runtime comes from containerRuntimeVersion
// (name and version) and the OCI runtime from the node's labels, where set.
func TestHostFactsRuntime(t *testing.T) {
	for _, c := range []struct {
		crv    string
		labels map[string]string
		want   skew.HostFacts
	}{
		{"containerd://1.7.24", nil, skew.HostFacts{Runtime: "containerd", RuntimeVersion: "1.7.24"}},
		{"containerd://2.4.2", map[string]string{skew.OCIRuntimeLabel: "crun", skew.OCIRuntimeVersionLabel: "1.21"},
			skew.HostFacts{Runtime: "containerd", RuntimeVersion: "2.4.2", OCIRuntime: "crun", OCIRuntimeVersion: "1.21"}},
		{"cri-o://1.34.0", map[string]string{skew.OCIRuntimeLabel: "runc"}, skew.HostFacts{Runtime: "cri-o", RuntimeVersion: "1.34.0", OCIRuntime: "runc"}},
		{"containerd://Unknown", map[string]string{"other": "x"}, skew.HostFacts{Runtime: "containerd"}},
		{"containerd", nil, skew.HostFacts{Runtime: "containerd"}}, // the dry run's
	} {
		got := hostFacts("n1", c.crv, c.labels)
		if got.Runtime != c.want.Runtime || got.RuntimeVersion != c.want.RuntimeVersion ||
			got.OCIRuntime != c.want.OCIRuntime || got.OCIRuntimeVersion != c.want.OCIRuntimeVersion {
			t.Errorf("hostFacts(%q, %v) = %+v, want the runtime of %+v", c.crv, c.labels, got, c.want)
		}
	}
}
