package main

import (
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/reports"
)

func newPreflightCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "preflight",
		Short: "check that this host can run clusters (Docker, privileges, cgroups, seccomp, AppArmor, disk)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			r := clusters.NewProvider(nil).Preflight(cmd.Context())
			if asJSON {
				if err := reports.WriteJSON(os.Stdout, r); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "CHECK\tSTATUS\tVALUE\tREMEDY")
				for _, c := range r.Checks {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Name, c.Status, c.Value, c.Remedy)
				}
				_ = tw.Flush()
			}
			if !r.CanRunClusters() {
				return errors.New("this host cannot run clusters; apply the remedies above")
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return c
}
