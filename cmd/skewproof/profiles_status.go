package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/status"
)

func newProfilesStatusCmd() *cobra.Command {
	return profilesCmd("status", "show each profile's aggregated status and its node statuses", profilesStatus)
}

func profilesStatus(ctx context.Context, c *profiles.Cluster) error {
	for _, kind := range []string{api.KindSeccompProfile, api.KindAppArmorProfile} {
		res, _ := api.Resource(kind)
		l, err := c.Dynamic.Resource(res).Namespace(c.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing %s: %w", res.Resource, apiRemedy(err))
		}
		for i := range l.Items {
			p, err := api.ProfileFromUnstructured(&l.Items[i])
			if err != nil {
				return err
			}
			fmt.Printf("%s %s: %s (localhostProfile %s)\n", kind, p.Name, orDash(string(p.Status.Status)), p.LocalhostProfile())
			states, err := status.ListNodeStates(ctx, c.Dynamic, p)
			if err != nil {
				return err
			}
			for _, s := range states {
				fmt.Printf("  %-28s %-12s %s\n", s.Node, s.Status, s.Message)
			}
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// apiRemedy adds to an error of the API server what to do about it: grant
// the permissions, or check that the cluster is reachable.
func apiRemedy(err error) error {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%w; grant the permissions 'skewproof rbac' prints (docs/rbac.md)", err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%w; the kubeconfig's credentials were refused: renew them", err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w; deploy the agent and its CRDs first: skewproof profiles deploy", err)
	case errors.As(err, new(apierrors.APIStatus)):
		return err
	}
	return fmt.Errorf("cannot reach the API server (%w); check that the cluster runs and the kubeconfig's server address", err)
}
