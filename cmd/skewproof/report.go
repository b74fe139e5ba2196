package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/reports/matrix"
)

func newReportCmd() *cobra.Command {
	var opts matrix.Options
	c := &cobra.Command{
		Use:   "report DIR|JUNIT... --out DIR [--baseline DIR|JUNIT]",
		Short: "join the results of several runs into one matrix: merged JUnit, summary.json, matrix.md and matrix.html",
		Long: "report reads the --junit-dir of any number of 'skewproof run's (junit*.xml and run.json), reports written by\n" +
			"'skewproof report', or JUnit files, and writes into --out: junit.xml (one <testsuite> per run, every test case\n" +
			"with all its properties), summary.json (per id and apiserver/kubelet pair: verdict, reason, observed, expected,\n" +
			"KEP plan, node), matrix.md and matrix.html (self-contained: ids by KEP section × apiserver/kubelet pairs, cells\n" +
			"coloured by verdict; click a cell for observed vs expected, the KEP section and the upstream source).\n" +
			"With --baseline, both pages also show what changed from that run or report.",
		Example: "  skewproof report _artifacts/run-1.36 _artifacts/run-1.37 --out report\n" +
			"  skewproof report _artifacts/run-1.37 --baseline old-report --out report\n" +
			"  skewproof report diff old-report report --format markdown",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.Usagef("give one or more run directories (the --junit-dir of 'skewproof run') or JUnit files, and --out DIR")
			}
			if opts.Out == "" {
				return cli.Usagef("--out is required, e.g. skewproof report %s --out report", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Inputs = args
			g, err := matrix.Generate(opts)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), g.Headline())
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", strings.Join(g.Files, ", "))
			return nil
		},
	}
	c.Flags().StringVar(&opts.Out, "out", "", "directory to write the report into (replaced if it holds a previous report)")
	c.Flags().StringVar(&opts.Baseline, "baseline", "", "a run directory, report directory or JUnit file to compare with")
	c.AddCommand(newReportDiffCmd())
	return c
}

func newReportDiffCmd() *cobra.Command {
	var format, oldRuntime, newRuntime string
	c := &cobra.Command{
		Use:   "diff OLD NEW [--format text|json|markdown] [--old-runtime SEL --new-runtime SEL]",
		Short: "what changed between two runs or reports: newly failing, newly passing, verdict changes, new deviations, ids appearing or disappearing",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return cli.Usagef("give two runs or reports, OLD and NEW (directories or JUnit files); got %d", len(args))
			}
			if (oldRuntime == "") != (newRuntime == "") {
				return cli.Usagef("give both --old-runtime and --new-runtime, or neither")
			}
			if _, err := reports.ParseFormat(format, matrix.DiffFormats...); err != nil {
				return cli.Usagef("%v", err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := matrix.DiffPaths(args[0], args[1], oldRuntime, newRuntime)
			if err != nil {
				return err
			}
			return matrix.WriteDiff(cmd.OutOrStdout(), reports.Format(format), d)
		},
	}
	c.Flags().StringVar(&format, "format", "text", "output format: text|json|markdown")
	c.Flags().StringVar(&oldRuntime, "old-runtime", "", "compare only OLD's results on this runtime, NAME[/VERSION] or CRI+OCI (e.g. runc, containerd/2+crun); with --new-runtime, cells are matched without the runtime, so OLD and NEW may be the same mixed-runtime run")
	c.Flags().StringVar(&newRuntime, "new-runtime", "", "compare only NEW's results on this runtime (see --old-runtime)")
	return c
}
