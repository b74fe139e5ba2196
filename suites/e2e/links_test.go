package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestE2EBinaryLinksNoClusterMachinery checks that the suite binary is the
// specs and what they need: not kind, not the cluster builder, not the
// runner (the suites learn the nodes' facts from internal/nodefacts and get
// the agent image from the runner).
func TestE2EBinaryLinksNoClusterMachinery(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, heavy := range []string{"sigs.k8s.io/kind", "github.com/google/go-containerregistry", "github.com/skewproof/skewproof/clusters/internal/"} {
			if strings.HasPrefix(p, heavy) {
				t.Errorf("the e2e binary links %s", p)
			}
		}
		// Packages of their own that the suites may use (the plan, the
		// kubeconfig loader) are fine; these are not.
		switch p {
		case "github.com/skewproof/skewproof/clusters", "github.com/skewproof/skewproof/runner", "github.com/skewproof/skewproof/runner/incluster",
			"github.com/skewproof/skewproof/profiles/agentimage":
			t.Errorf("the e2e binary links %s", p)
		}
	}
}
