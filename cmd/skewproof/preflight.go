package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/skewproof/skewproof/clusters"
)

func init() {
	register(command{name: "preflight", summary: "check that this host can run clusters (Docker, privileges, cgroups, seccomp, AppArmor, disk)", run: preflight})
}

func preflight(ctx context.Context, args []string) error {
	fs := newFlagSet("preflight")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	r := clusters.Preflight(ctx)
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CHECK\tVERDICT\tVALUE\tREMEDY")
		for _, c := range r.Checks {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Name, c.Verdict, c.Value, c.Remedy)
		}
		tw.Flush()
	}
	if !r.CanRunClusters() {
		return errors.New("this host cannot run clusters; apply the remedies above")
	}
	return nil
}
