package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/served"
)

func init() {
	register(command{
		name:    "matrix",
		summary: "print the clusters to run for a range of kube-apiserver minors (text, json or a GitHub Actions matrix)",
		run:     runMatrix,
	})
}

func runMatrix(ctx context.Context, args []string) error {
	fs := newFlagSet("matrix")
	rangeFlag := fs.String("apiserver", "", "kube-apiserver minors, e.g. 1.34..1.37 or 1.36")
	formatFlag := fs.String("format", "text", "output format: text|json|github")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "usage: skewproof matrix --apiserver 1.34..1.37 [--format text|json|github]")
			fs.SetOutput(os.Stderr)
			fs.PrintDefaults()
			return err
		}
		return usagef("%v; run 'skewproof matrix -h'", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q; give the range with --apiserver, e.g. --apiserver 1.34..1.37", fs.Arg(0))
	}
	switch *formatFlag {
	case "text", "json", "github":
	default:
		return usagef("unknown --format %q; use text, json or github", *formatFlag)
	}
	if *rangeFlag == "" {
		return usagef("--apiserver is required, e.g. skewproof matrix --apiserver 1.34..1.37")
	}
	from, to, err := skew.ParseMinorRange(*rangeFlag)
	if err != nil {
		return usagef("--apiserver: %v", err)
	}
	list, err := served.Versions(ctx)
	if err != nil {
		return err
	}
	clusters, err := skew.Matrix(list, from, to)
	if err != nil {
		return usagef("--apiserver: %v", err)
	}
	return reports.WriteMatrix(oracleOut, *formatFlag, clusters)
}
