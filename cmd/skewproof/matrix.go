package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/reports"
)

func newMatrixCmd() *cobra.Command {
	var rangeFlag, format string
	c := &cobra.Command{
		Use:   "matrix --apiserver 1.34..1.37 [--format text|json|github]",
		Short: "print the clusters to run for a range of kube-apiserver minors or the history preset (text, json or a GitHub Actions matrix)",
		Args:  noArgs("; give the range with --apiserver, e.g. --apiserver 1.34..1.37"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := reports.ParseFormat(format, reports.MatrixFormats...)
			if err != nil {
				return cli.Usagef("%v", err)
			}
			if rangeFlag == "" {
				return cli.Usagef("--apiserver is required, e.g. skewproof matrix --apiserver 1.34..1.37")
			}
			clusters, err := planMatrix(cmd.Context(), rangeFlag)
			if err != nil {
				return fmt.Errorf("--apiserver: %w", err)
			}
			return reports.WriteMatrix(oracleOut, f, clusters)
		},
	}
	c.Flags().StringVar(&rangeFlag, "apiserver", "", "kube-apiserver minors, e.g. 1.34..1.37 or 1.36, or the preset history (the annotation eras: skewproof run --matrix history)")
	c.Flags().StringVar(&format, "format", "text", "output format: text|json|github")
	return c
}
