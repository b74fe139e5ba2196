package main

import (
	"archive/tar"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/cmd/internal/cli"
	"github.com/skewproof/skewproof/reports/bundle"
)

// bundleOut is where bundle and bundle verify write; tests replace it.
var bundleOut io.Writer = os.Stdout

func newBundleCmd() *cobra.Command {
	var from, out string
	var force bool
	c := &cobra.Command{
		Use:   "bundle --from DIR --out FILE.tar.gz [--force]",
		Short: "pack a run directory into a results bundle (CNCF submission layout; a self-check, not a certification)",
		Args:  noArgs("; give the run directory with --from and the bundle with --out"),
		RunE: func(*cobra.Command, []string) error {
			if from == "" || out == "" {
				return cli.Usagef("--from and --out are required, e.g. skewproof bundle --from _artifacts --out results.tar.gz")
			}
			if !strings.HasSuffix(out, ".tar.gz") && !strings.HasSuffix(out, ".tgz") {
				return cli.Usagef("--out %s: the bundle is a gzip'd tar; name it FILE.tar.gz", out)
			}
			if st, err := os.Stat(from); err != nil || !st.IsDir() {
				return cli.Usagef("--from %s is not a directory; give the --junit-dir of 'skewproof run' (or the in-cluster results directory)", from)
			}
			if _, err := os.Lstat(out); err == nil && !force {
				return cli.Usagef("--out %s exists; remove it or give --force to replace it", out)
			}
			if err := bundle.Create(from, out, bundle.Options{Overwrite: force}); err != nil {
				if errors.Is(err, bundle.ErrNoRecord) {
					return cli.Usagef("%v", err)
				}
				return err
			}
			// Read back what was written: the summary says what the bundle holds.
			s, err := bundle.Verify(out)
			if err != nil {
				_ = os.Remove(out)
				return fmt.Errorf("the bundle written does not verify (removed): %w", err)
			}
			fmt.Fprintf(bundleOut, "wrote %s: %s\n", out, s)
			return nil
		},
	}
	c.Flags().StringVar(&from, "from", "", "run directory: the --junit-dir of 'skewproof run' (or the in-cluster results directory)")
	c.Flags().StringVar(&out, "out", "", "bundle to write, e.g. results.tar.gz")
	c.Flags().BoolVar(&force, "force", false, "replace --out if it exists")
	c.AddCommand(&cobra.Command{
		Use:   "verify FILE.tar.gz",
		Short: "check a results bundle: checksums, file list, junit_01.xml and run.json; exits 1 unless the run it holds is green",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cli.Usagef("give one bundle, e.g. skewproof bundle verify results.tar.gz")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			s, err := bundle.Verify(args[0])
			var corrupt flate.CorruptInputError
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return fmt.Errorf("%w; give the FILE.tar.gz 'skewproof bundle' wrote", err)
			case errors.As(err, &corrupt) || errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) ||
				errors.Is(err, tar.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF):
				return fmt.Errorf("%w; the file is damaged or no bundle: write it again with 'skewproof bundle --from DIR --out FILE.tar.gz'", err)
			case err != nil:
				return err
			}
			if !s.Green {
				// Intact, but what it records is not a green run: a gate
				// on this command must not pass it.
				return fmt.Errorf("%s is intact, but %s", args[0], s)
			}
			fmt.Fprintf(bundleOut, "ok: %s\n", s)
			return nil
		},
	})
	return c
}
