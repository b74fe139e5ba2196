package apparmor

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	h "github.com/skewproof/skewproof/suites/internal/harness"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// KEP-24 §Proposal › Node Status.
var _ = Describe("[apparmor] node status", Label("apparmor", "node"), func() {
	h.SetUp(family)
	h.KubeletRule("apparmor/node/ready-message", func(ctx context.Context, t *h.Scenario) {
		n, err := t.F.ClientSet.CoreV1().Nodes().Get(ctx, t.NodeName(), metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		var msg *string
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				m := c.Message
				msg = &m
			}
		}
		t.Judge(h.Sub{Name: "Ready condition of " + n.Name, Obs: observe.Observation{ReadyMessage: msg}})
	})
})
