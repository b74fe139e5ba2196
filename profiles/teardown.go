// Teardown: everything Deploy made removed, the profiles first so that the
// agents still running remove their files from the nodes.

package profiles

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/skewproof/skewproof/profiles/agent"
	"github.com/skewproof/skewproof/profiles/api"
)

// Teardown removes what Deploy made: the namespace (with the profiles,
// static pods, node statuses and agents), the cluster-scoped RBAC and
// policy objects, and, with crds, the CRDs.
//
// The profiles and static pods go first, while the agents still run, so
// that the agents remove their files from the nodes.
func (c *Cluster) Teardown(ctx context.Context, crds bool) error {
	objs, err := agent.Objects(agent.DeployOptions{Namespace: c.Namespace, Image: "unused", OwnNodePolicy: true})
	if err != nil {
		return err
	}
	var errs []error
	var ms []Manifest
	for _, kind := range api.AgentKinds {
		res, _ := api.AgentResource(kind)
		l, err := c.Dynamic.Resource(res).Namespace(c.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue // no CRD or no namespace: nothing to remove from nodes
		}
		for _, it := range l.Items {
			ms = append(ms, Manifest{Kind: kind, Name: it.GetName()})
		}
	}
	if len(ms) > 0 {
		if err := Uninstall(ctx, c, ms, 2*time.Minute); err != nil {
			errs = append(errs, err)
		}
		// The agents remove files on the deletion events; give them a pass.
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
	for i := len(objs) - 1; i >= 0; i-- {
		o := objs[i]
		if o.Namespaced() {
			continue // goes with the namespace
		}
		err := c.Dynamic.Resource(o.Resource).Delete(ctx, o.Object.GetName(), metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
		if err == nil && o.Object.GetKind() == "Namespace" {
			// Wait for it to be gone (its pods stopped, its objects
			// deleted), so that nothing of it remains when Teardown returns.
			err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
				_, err := c.Dynamic.Resource(o.Resource).Get(ctx, o.Object.GetName(), metav1.GetOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					return false, err
				}
				return apierrors.IsNotFound(err), nil
			})
			if err != nil {
				errs = append(errs, fmt.Errorf("namespace %s is still being deleted: %w", o.Object.GetName(), err))
			}
		}
	}
	if crds {
		all, err := api.CRDs()
		if err != nil {
			return err
		}
		for _, crd := range all {
			if err := c.Dynamic.Resource(api.CRDResource).Delete(ctx, crd.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
