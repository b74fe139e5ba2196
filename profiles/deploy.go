// Deploying the node agent: the CRDs (applied and waited for until
// established), the agent's objects (agent.Objects) with the options the API
// server's version allows, and the wait until the agent is Ready on every
// node it is scheduled to.

package profiles

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/skewproof/skewproof/internal/nodefacts"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/skewproof/skewproof/internal/podready"
	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/api"
)

func (c *Cluster) apply(ctx context.Context, o agent.Object) error {
	r := c.Dynamic.Resource(o.Resource)
	var ri dynamic.ResourceInterface = r
	if o.Namespaced() {
		ri = r.Namespace(o.Object.GetNamespace())
	}
	_, err := ri.Apply(ctx, o.Object.GetName(), o.Object, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", o.Object.GetKind(), o.Object.GetName(), err)
	}
	return nil
}

// InstallCRDs applies the API's CRDs and waits until they are established.
func (c *Cluster) InstallCRDs(ctx context.Context) error {
	crds, err := api.CRDs()
	if err != nil {
		return err
	}
	minor, err := serverMinor(c.Core.Discovery())
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if minor < validationRulesMinor {
			crd = withoutValidationRules(crd)
		}
		if err := c.apply(ctx, agent.Object{Resource: api.CRDResource, Object: crd}); err != nil {
			return err
		}
	}
	for _, crd := range crds {
		err := wait.PollUntilContextTimeout(ctx, pollInterval, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			u, err := c.Dynamic.Resource(api.CRDResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, cd := range conds {
				m, _ := cd.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", crd.GetName(), err)
		}
	}
	return nil
}

// Deploy installs the CRDs, the agent DaemonSet and the aggregator, and
// waits until the agent is Ready on every node it is scheduled to.
func (c *Cluster) Deploy(ctx context.Context, o agent.DeployOptions, timeout time.Duration) error {
	o.Namespace = c.Namespace
	if err := c.InstallCRDs(ctx); err != nil {
		return err
	}
	minor := c.serverMinor()
	if !o.OwnNodePolicy {
		// ValidatingAdmissionPolicy v1 (1.30) and the node name in service
		// account tokens (1.32) are both needed.
		o.OwnNodePolicy = minor >= 32
	}
	if minor > 0 && minor < 30 {
		// securityContext.appArmorProfile is 1.30+.
		o.AppArmorAnnotation = true
	}
	objs, err := agent.Objects(o)
	if err != nil {
		return err
	}
	if err := c.waitNamespaceGone(ctx, timeout); err != nil {
		return err
	}
	for _, obj := range objs {
		if err := c.apply(ctx, obj); err != nil {
			return err
		}
	}
	return c.WaitAgentReady(ctx, timeout)
}

// waitNamespaceGone waits while the agent's namespace is still terminating
// (an earlier run's teardown that has not finished: nothing can be created
// in it until it is gone), saying so, and names what holds it when it does
// not go within timeout.
func (c *Cluster) waitNamespaceGone(ctx context.Context, timeout time.Duration) error {
	ns, err := c.Core.CoreV1().Namespaces().Get(ctx, c.Namespace, metav1.GetOptions{})
	if err != nil || ns.DeletionTimestamp == nil {
		return nil // absent (or unreadable: applying says why)
	}
	fmt.Fprintf(os.Stderr, "namespace %s is still terminating (deleted %s ago, by an earlier run); waiting for it to go\n",
		c.Namespace, time.Since(ns.DeletionTimestamp.Time).Round(time.Second))
	var holds string
	err = wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		ns, err := c.Core.CoreV1().Namespaces().Get(ctx, c.Namespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err == nil && ctx.Err() == nil {
			holds = terminatingHolds(ctx, c, ns)
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("namespace %s, left terminating by an earlier run, did not go within %s (%s); remove what holds it, e.g. pods on a node that is gone: kubectl delete pods -n %s --all --force --grace-period=0",
			c.Namespace, timeout, holds, c.Namespace)
	}
	return nil
}

// terminatingHolds says what keeps a terminating namespace: its conditions'
// messages and the pods left in it, with their nodes.
func terminatingHolds(ctx context.Context, c *Cluster, ns *corev1.Namespace) string {
	var parts []string
	for _, cd := range ns.Status.Conditions {
		if cd.Status == corev1.ConditionTrue && cd.Message != "" {
			parts = append(parts, cd.Message)
		}
	}
	if pl, err := c.Core.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pl.Items {
			parts = append(parts, fmt.Sprintf("pod %s on node %s", p.Name, p.Spec.NodeName))
		}
	}
	if len(parts) == 0 {
		return "nothing named"
	}
	return strings.Join(parts, "; ")
}

// serverMinor is the API server's minor version (1.x), 0 when unknown.
func (c *Cluster) serverMinor() int {
	v, err := c.Core.Discovery().ServerVersion()
	if err != nil || v.Major != "1" {
		return 0
	}
	var minor int
	_, _ = fmt.Sscanf(strings.TrimRight(v.Minor, "+"), "%d", &minor)
	return minor
}

// WaitAgentReady waits until the agent DaemonSet is rolled out and Ready
// on every node it is scheduled to; the error names the nodes that are not.
func (c *Cluster) WaitAgentReady(ctx context.Context, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		ds, err := c.Core.AppsV1().DaemonSets(c.Namespace).Get(ctx, agent.AgentName, metav1.GetOptions{})
		if err != nil {
			if ctx.Err() == nil && !deadlineNear(err) {
				// The wait's own deadline is not the reason: keep the last one.
				last = err.Error()
			}
			return false, nil
		}
		ok, why := daemonSetReady(ds)
		if !ok && agentsUpdated(ds) && c.notReadyNodesOfAgents(ctx) == "" {
			// The DaemonSet counts its pods' Ready conditions, which a
			// kubelet before v1.21 sets up to a minute after the agent's
			// startup probe passed: count the pods themselves (on Ready
			// nodes: a node that stopped reporting leaves its pods'
			// last container statuses).
			if ready, err := c.AgentPods(ctx); err == nil && countReady(ready) >= int(ds.Status.DesiredNumberScheduled) {
				ok = true
			}
		}
		if !ok {
			if pods, err := c.notReadyAgents(ctx); err == nil || ctx.Err() == nil && !deadlineNear(err) {
				last = why + "; " + pods
			}
			// A node that stopped being Ready will not run its agent: say so
			// now, not at the time-out.
			if gone := c.notReadyNodesOfAgents(ctx); gone != "" {
				return false, fmt.Errorf("%s", gone)
			}
			return false, nil
		}
		return true, nil
	})
	if err != nil && !wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("agent not ready: %w; make the node Ready or leave it out of the run", err)
	}
	if err != nil {
		return fmt.Errorf("agent DaemonSet not ready within %s: %s", timeout, last)
	}
	return nil
}

// deadlineNear says whether err is the client giving up because the wait's
// deadline is about to pass (client-go's rate limiter: "Wait returned an
// error: rate: Wait(n=1) would exceed context deadline"): the wait's own
// end, never the reason for it.
func deadlineNear(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "would exceed context deadline")
}

func daemonSetReady(ds *appsv1.DaemonSet) (bool, string) {
	s := ds.Status
	switch {
	case s.ObservedGeneration < ds.Generation:
		return false, "not observed yet"
	case s.DesiredNumberScheduled == 0:
		return false, "scheduled on no node"
	case s.UpdatedNumberScheduled < s.DesiredNumberScheduled || s.NumberReady < s.DesiredNumberScheduled:
		return false, fmt.Sprintf("%d/%d updated, %d/%d ready", s.UpdatedNumberScheduled, s.DesiredNumberScheduled, s.NumberReady, s.DesiredNumberScheduled)
	}
	return true, ""
}

// agentsUpdated: the DaemonSet controller has seen the DaemonSet and runs
// its current template on every node it schedules to.
func agentsUpdated(ds *appsv1.DaemonSet) bool {
	s := ds.Status
	return s.ObservedGeneration >= ds.Generation && s.DesiredNumberScheduled > 0 && s.UpdatedNumberScheduled >= s.DesiredNumberScheduled
}

// countReady counts the nodes whose agent pod is ready.
func countReady(byNode map[string]bool) int {
	n := 0
	for _, r := range byNode {
		if r {
			n++
		}
	}
	return n
}

// AgentPods maps node name to the agent pod's readiness.
func (c *Cluster) AgentPods(ctx context.Context) (map[string]bool, error) {
	pl, err := c.Core.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + agent.AgentName})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, p := range pl.Items {
		if p.DeletionTimestamp == nil {
			out[p.Spec.NodeName] = out[p.Spec.NodeName] || podready.Ready(&p)
		}
	}
	return out, nil
}

// notReadyNodesOfAgents names the nodes whose agent is not ready because
// the node itself is not Ready (its kubelet stopped, say), with the Ready
// condition; "" when there are none.
func (c *Cluster) notReadyNodesOfAgents(ctx context.Context) string {
	m, err := c.AgentPods(ctx)
	if err != nil {
		return ""
	}
	var out []string
	for n, ok := range m {
		if ok {
			continue
		}
		node, err := c.Core.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			continue
		}
		if why := nodefacts.NotReady(node); why != "" {
			out = append(out, strings.Replace(why, " is not Ready", " went not Ready", 1))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

func (c *Cluster) notReadyAgents(ctx context.Context) (string, error) {
	pl, err := c.Core.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + agent.AgentName})
	if err != nil {
		return err.Error(), err
	}
	var bad []string
	for _, p := range pl.Items {
		if p.DeletionTimestamp != nil || podready.Ready(&p) {
			continue
		}
		n := p.Spec.NodeName
		if n == "" {
			n = "(unscheduled " + p.Name + ")"
		}
		if why := podWhy(&p); why != "" {
			n += " (" + why + ")"
		}
		bad = append(bad, n)
	}
	sort.Strings(bad)
	if len(bad) == 0 {
		return "every agent pod is ready", nil
	}
	return "agent not ready on node(s) " + strings.Join(bad, ", "), nil
}

// podWhy is why a pod's containers do not run, from their statuses: the
// waiting reason and message ("RunContainerError: … error executing
// hook …"), else the last termination's; "" when nothing says.
func podWhy(p *corev1.Pod) string {
	terminated := func(t *corev1.ContainerStateTerminated) string {
		return strings.TrimSuffix(fmt.Sprintf("%s (exit %d): %s", t.Reason, t.ExitCode, t.Message), ": ")
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		var parts []string
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" {
			parts = append(parts, strings.TrimSuffix(w.Reason+": "+w.Message, ": "))
		}
		if t := cs.State.Terminated; t != nil {
			parts = append(parts, terminated(t))
		} else if t := cs.LastTerminationState.Terminated; t != nil {
			parts = append(parts, "last: "+terminated(t))
		}
		if len(parts) > 0 {
			why, _, _ := strings.Cut(strings.Join(parts, "; "), "\n")
			return cs.Name + ": " + why
		}
	}
	for _, cd := range p.Status.Conditions {
		if cd.Type == corev1.PodScheduled && cd.Status != corev1.ConditionTrue {
			return "not scheduled: " + cd.Message
		}
	}
	return ""
}
