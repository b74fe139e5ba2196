package harness

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// TestLinuxNodes: Env.Nodes are the Linux nodes, control plane included,
// sorted by name, whatever order the API server lists them in.
func TestLinuxNodes(t *testing.T) {
	item := func(name, os string) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelOSStable: os}}}
	}
	items := []corev1.Node{item("w2", "linux"), item("win", "windows"), item("cp", "linux"),
		{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled"}}, item("w1", "linux")}
	var all []Node
	for _, it := range items {
		all = append(all, Node{Name: it.Name, ControlPlane: it.Name == "cp"})
	}
	got := linuxNodes(items, all)
	if names := nodeNames(got); !slices.Equal(names, []string{"cp", "w1", "w2"}) {
		t.Errorf("linux nodes %q, want cp, w1, w2", names)
	}
	if len(got) > 0 && !got[0].ControlPlane {
		t.Errorf("the control plane lost its role: %+v", got[0])
	}
}

// TestPositive: a number setting is its default when unset, a positive
// number when set, and an error naming the variable otherwise.
func TestPositive(t *testing.T) {
	for value, want := range map[string]int{"": 500, "1": 1, "5000": 5000} {
		if got, err := positive("SKEWPROOF_X", value, 500); err != nil || got != want {
			t.Errorf("positive(%q) = %d, %v; want %d", value, got, err, want)
		}
	}
	for _, value := range []string{"0", "-3", "many", "1.5"} {
		if _, err := positive("SKEWPROOF_X", value, 500); err == nil || !strings.Contains(err.Error(), `SKEWPROOF_X="`+value+`"`) {
			t.Errorf("positive(%q): %v, want an error naming the variable and its value", value, err)
		}
	}
}
