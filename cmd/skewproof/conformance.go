package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/runner"
	"github.com/skewproof/skewproof/runner/incluster"
)

func newImagesConformanceCmd() *cobra.Command {
	var out, cluster, suite string
	c := &cobra.Command{
		Use:   "conformance",
		Short: "write the in-cluster conformance image (--output FILE) or load it into a skewproof cluster's nodes (--cluster NAME), for Hydrophone and Sonobuoy",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return imagesConformance(cmd.Context(), &out, &cluster, &suite)
		},
	}
	c.Flags().StringVar(&out, "output", "", "archive to write (docker-save format), e.g. skewproof-conformance.tar")
	c.Flags().StringVar(&cluster, "cluster", "", "load the image into the nodes of this skewproof cluster instead")
	c.Flags().StringVar(&suite, "suite-binary", "", "the e2e binary (default: "+runner.SuiteBinaryName+" beside this executable)")
	return c
}

func imagesConformance(ctx context.Context, out, cluster, suite *string) error {
	if (*out == "") == (*cluster == "") {
		return cli.Usagef("give --output FILE or --cluster NAME")
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if *suite, err = suiteBinary(*suite); err != nil {
		return err
	}
	var img incluster.Image
	if *out != "" {
		img, err = incluster.SaveImage(ctx, exe, *suite, *out)
	} else {
		var nodes []string
		if nodes, err = clusters.NewProvider(nil).NodeNames(ctx, *cluster); err != nil {
			return err
		}
		img, err = incluster.LoadImage(ctx, exe, *suite, nodes)
	}
	if err != nil {
		return err
	}
	if img.Note != "" {
		fmt.Fprintf(os.Stderr, "warning: %s\n", img.Note)
	}
	if *out != "" {
		fmt.Printf("%s written to %s\nload it (docker load -i %s), tag and push it where the nodes pull from, then:\n  hydrophone --conformance-image REF --busybox-image REF --focus 'seccomp|apparmor|profiles'\n", img.Ref, *out, *out)
	} else {
		fmt.Printf("%s loaded into the nodes of %s\n", img.Ref, *cluster)
	}
	return nil
}

// newConformanceEntrypointCmd is the conformance image's entrypoint; it
// takes no arguments (not even flags) and reads its environment.
func newConformanceEntrypointCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "conformance-entrypoint",
		Short:              "run the suites inside the cluster: the conformance image's entrypoint (E2E_FOCUS, E2E_SKIP, E2E_EXTRA_ARGS, E2E_EXTRA_GINKGO_ARGS, E2E_DRYRUN)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("unexpected argument %q: the entrypoint reads E2E_FOCUS, E2E_SKIP, E2E_EXTRA_ARGS, E2E_EXTRA_GINKGO_ARGS and E2E_DRYRUN", args[0])
			}
			os.Exit(incluster.Main(cmd.Context()))
			return nil
		},
	}
}
