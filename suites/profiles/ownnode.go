package profiles

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/status"
	h "github.com/skewproof/skewproof/suites/internal/harness"
)

// agentClient is a client with the credentials the agent pod on nd has: a
// service account token bound to that pod (so it carries the node name).
func agentClient(ctx context.Context, nd h.Node) dynamic.Interface {
	pods, err := env.Cluster.Core.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=" + agent.AgentName, FieldSelector: "spec.nodeName=" + nd.Name})
	Expect(err).NotTo(HaveOccurred())
	Expect(pods.Items).NotTo(BeEmpty(), "no agent pod on node %s", nd.Name)
	pod := pods.Items[0]
	exp := int64(600)
	tr, err := env.Cluster.Core.CoreV1().ServiceAccounts(Namespace).CreateToken(ctx, agent.AgentName, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp,
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	cfg := rest.AnonymousClientConfig(env.Cluster.Config)
	cfg.BearerToken = tr.Status.Token
	dyn, err := dynamic.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	return dyn
}

var _ = Describe("[profiles] least privilege", Label("profiles", "LinuxOnly"), func() {
	h.Specs(family)
	withAgent()
	It("[profiles/agent/own-node] an agent's credentials write the status of its own node only [LinuxOnly]", Label("profiles-agent-own-node"), func(ctx SpecContext) {
		if len(env.Nodes) < 2 {
			// skewproof's own clusters have two nodes at least: there, a
			// failure of its set-up (the others are not Ready).
			h.MissingSetUp("profiles/agent/own-node", nil, fmt.Sprintf("needs two nodes; the run can test %d (left out: %v)", len(env.Nodes), env.Excluded))
		}
		m := seccompManifest("own-node")
		uninstallLater(m)
		res, _ := api.Resource(m.Kind)
		u, err := m.Object(Namespace)
		Expect(err).NotTo(HaveOccurred())
		_, err = env.Cluster.Dynamic.Resource(res).Namespace(Namespace).Create(ctx, u, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		p, _, err := status.GetProfile(ctx, env.Cluster.Dynamic, m.Kind, Namespace, m.Name)
		Expect(err).NotTo(HaveOccurred())

		mine, other := env.Nodes[0], env.Nodes[1]
		dyn := agentClient(ctx, mine)
		c := dyn.Resource(api.ProfileNodeStatuses).Namespace(Namespace)
		// Another node's status: denied by the admission policy.
		forged, err := api.ToUnstructured(p.NewNodeStatus(other.Name, api.Failed, "forged by "+mine.Name))
		Expect(err).NotTo(HaveOccurred())
		forged.SetName(forged.GetName() + "-forged")
		_, err = c.Create(ctx, forged, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err)).To(BeTrue(), "writing node %s's status with node %s's agent credentials: %v", other.Name, mine.Name, err)
		Expect(err.Error()).To(ContainSubstring("its own node"))
		// Its own node's status: allowed (dry run: the real agent owns it).
		own, err := api.ToUnstructured(p.NewNodeStatus(mine.Name, api.Installed, ""))
		Expect(err).NotTo(HaveOccurred())
		own.SetName(own.GetName() + "-dryrun")
		_, err = c.Create(ctx, own, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		Expect(err).NotTo(HaveOccurred())
		// Profiles are read-only to the agent (RBAC).
		err = dyn.Resource(res).Namespace(Namespace).Delete(ctx, m.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "agent deleting a profile: %v", err)
		h.RecordPass("profiles/agent/own-node", &mine, fmt.Sprintf("agent of %s: own status allowed, %s's denied by the admission policy, profiles read-only", mine.Name, other.Name))
	})
})
