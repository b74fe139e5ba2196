package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/skewproof/skewproof/reports/bundle"
)

// bundleOut is where bundle and bundle verify write; tests replace it.
var bundleOut io.Writer = os.Stdout

func init() {
	register(command{
		name:    "bundle",
		summary: "pack a run directory into a results bundle (CNCF submission layout; a self-check, not a certification)",
		run:     runBundle,
	})
	register(command{
		name:    "bundle verify",
		summary: "check a results bundle: checksums, file list, junit_01.xml and run.json",
		run:     runBundleVerify,
	})
}

func runBundle(ctx context.Context, args []string) error {
	fs := newFlagSet("bundle")
	from := fs.String("from", "", "run directory: the --junit-dir of 'skewproof run' (or the in-cluster results directory)")
	out := fs.String("out", "", "bundle to write, e.g. results.tar.gz")
	force := fs.Bool("force", false, "replace --out if it exists")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "usage: skewproof bundle --from DIR --out FILE.tar.gz [--force]\n       skewproof bundle verify FILE.tar.gz")
			fs.SetOutput(os.Stderr)
			fs.PrintDefaults()
			return err
		}
		return usagef("%v; run 'skewproof bundle -h'", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q; give the run directory with --from and the bundle with --out", fs.Arg(0))
	}
	if *from == "" || *out == "" {
		return usagef("--from and --out are required, e.g. skewproof bundle --from _artifacts --out results.tar.gz")
	}
	if !strings.HasSuffix(*out, ".tar.gz") && !strings.HasSuffix(*out, ".tgz") {
		return usagef("--out %s: the bundle is a gzip'd tar; name it FILE.tar.gz", *out)
	}
	if st, err := os.Stat(*from); err != nil || !st.IsDir() {
		return usagef("--from %s is not a directory; give the --junit-dir of 'skewproof run' (or the in-cluster results directory)", *from)
	}
	if _, err := os.Lstat(*out); err == nil && !*force {
		return usagef("--out %s exists; remove it or give --force to replace it", *out)
	}
	if err := bundle.Create(*from, *out, bundle.Options{Overwrite: *force}); err != nil {
		if errors.Is(err, bundle.ErrNoRecord) {
			return usagef("%v", err)
		}
		return err
	}
	// Read back what was written: the summary says what the bundle holds.
	s, err := bundle.Verify(*out)
	if err != nil {
		os.Remove(*out)
		return fmt.Errorf("the bundle written does not verify (removed): %w", err)
	}
	fmt.Fprintf(bundleOut, "wrote %s: %s\n", *out, s)
	return nil
}

func runBundleVerify(ctx context.Context, args []string) error {
	fs := newFlagSet("bundle verify")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "usage: skewproof bundle verify FILE.tar.gz")
			return err
		}
		return usagef("%v; run 'skewproof bundle verify -h'", err)
	}
	if fs.NArg() != 1 {
		return usagef("give one bundle, e.g. skewproof bundle verify results.tar.gz")
	}
	s, err := bundle.Verify(fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(bundleOut, "ok: %s\n", s)
	return nil
}
