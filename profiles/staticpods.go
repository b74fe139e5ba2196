package profiles

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/api"
)

// AgentReadyOn returns nil when an agent pod of the cluster's namespace is
// Ready on node, else an error that says what is missing.
func (c *Cluster) AgentReadyOn(ctx context.Context, node string) error {
	pods, err := c.AgentPods(ctx)
	if err != nil {
		return fmt.Errorf("listing the agent pods of namespace %s: %w", c.Namespace, err)
	}
	ready, ok := pods[node]
	switch {
	case !ok:
		return fmt.Errorf("no %s pod on node %s in namespace %s (deploy it with 'skewproof profiles deploy --namespace %s', or run through 'skewproof run')",
			agent.AgentName, node, c.Namespace, c.Namespace)
	case !ready:
		return fmt.Errorf("the %s pod on node %s (namespace %s) is not Ready", agent.AgentName, node, c.Namespace)
	}
	return nil
}

// PutStaticPod creates the StaticPod name in the cluster's namespace, by
// which the agent of node writes pod into that node's static pod directory,
// and waits until that agent reports it: the returned status is Installed
// (its message is the manifest's path on the node) or Failed (the error
// says why). An existing StaticPod of that name is replaced.
func (c *Cluster) PutStaticPod(ctx context.Context, name, node string, pod *corev1.Pod, timeout time.Duration) (api.ProfileNodeStatus, error) {
	var st api.ProfileNodeStatus
	sp, err := api.StaticPodObject(c.Namespace, name, node, pod)
	if err != nil {
		return st, err
	}
	u, err := api.ToUnstructured(sp)
	if err != nil {
		return st, err
	}
	ri := c.Dynamic.Resource(api.StaticPods).Namespace(c.Namespace)
	if err := ri.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return st, fmt.Errorf("replacing StaticPod %s: %w", name, err)
	}
	created, err := ri.Create(ctx, u, metav1.CreateOptions{FieldManager: FieldManager})
	if err != nil {
		return st, fmt.Errorf("creating StaticPod %s/%s: %w", c.Namespace, name, err)
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		o, err := c.Dynamic.Resource(api.ProfileNodeStatuses).Namespace(c.Namespace).Get(ctx, api.NodeStatusName(name, node), metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		var s api.ProfileNodeStatus
		if err := api.FromUnstructured(o, &s); err != nil {
			return false, err
		}
		if s.ProfileKind != api.KindStaticPod || len(s.OwnerReferences) == 0 || s.OwnerReferences[0].UID != created.GetUID() ||
			s.ProfileGeneration != created.GetGeneration() {
			last = "no status of this StaticPod yet"
			return false, nil
		}
		st, last = s, fmt.Sprintf("%s %s", s.Status, s.Message)
		return s.Status == api.Installed || s.Status == api.Failed, nil
	})
	switch {
	case err != nil:
		return st, fmt.Errorf("the agent of node %s did not report StaticPod %s/%s within %s (last: %s)", node, c.Namespace, name, timeout, strings.TrimSpace(last))
	case st.Status == api.Failed:
		return st, fmt.Errorf("the agent of node %s could not write StaticPod %s/%s: %s", node, c.Namespace, name, st.Message)
	}
	return st, nil
}

// DeleteStaticPod deletes a StaticPod; its agent removes the manifest, and
// the kubelet then stops the pod and deletes its mirror pod.
func (c *Cluster) DeleteStaticPod(ctx context.Context, name string) error {
	err := c.Dynamic.Resource(api.StaticPods).Namespace(c.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting StaticPod %s/%s: %w", c.Namespace, name, err)
	}
	return nil
}
