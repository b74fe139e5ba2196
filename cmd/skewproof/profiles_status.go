package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
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
			return fmt.Errorf("listing %s: %w", res.Resource, err)
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
