package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/hashicorp/go-version"
	"github.com/spf13/cobra"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
	"github.com/skewproof/skewproof/skew/served"
)

type simulateOptions struct {
	apiserver, kubelet, upgrade, deviations string
	apparmor, seccomp, runtime, format      string
}

// NewSimulateCmd is 'skewproof simulate'; it writes to out().
func NewSimulateCmd(out func() io.Writer) *cobra.Command {
	var o simulateOptions
	c := &cobra.Command{
		Use: "simulate",
		Example: "  skewproof simulate --apiserver X.Y.Z [--kubelet A.B.C] [--apparmor on|off] [--runtime NAME[/VERSION][+OCI[/VERSION]]] [--format text|json|markdown]\n" +
			"  skewproof simulate --upgrade FROM TO [--format text|json|markdown]\n" +
			"  skewproof simulate --deviations 1.29..1.37 [--format text|json|markdown]",
		Short: "print the expected seccomp/AppArmor outcomes for a kube-apiserver/kubelet pair or an upgrade",
		// run checks the positionals itself: --upgrade FROM TO leaves TO as one.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), out(), cmd.ErrOrStderr(), cmd.CommandPath(), args)
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.apiserver, "apiserver", "", "kube-apiserver version, e.g. 1.37.2")
	fs.StringVar(&o.kubelet, "kubelet", "", "kubelet version, e.g. 1.34.4 (default: the apiserver version)")
	fs.StringVar(&o.upgrade, "upgrade", "", "upgrade mode: --upgrade FROM TO prints only what changes for workloads")
	fs.StringVar(&o.deviations, "deviations", "", "list every deviation between the KEP plans and upstream for a range of minors, e.g. 1.29..1.37")
	fs.StringVar(&o.apparmor, "apparmor", "on", "whether the node has AppArmor: on|off")
	fs.StringVar(&o.seccomp, "seccomp", "on", "whether the node has seccomp filters: on|off")
	fs.StringVar(&o.runtime, "runtime", "containerd", "container runtime of the node: NAME[/VERSION][+OCI[/VERSION]], e.g. containerd/2.4.2+crun/1.21 or cri-o/1.34.0 (an unstated version or OCI runtime matches every one read)")
	fs.StringVar(&o.format, "format", "text", "output format: text|json|markdown")
	return c
}

func (o simulateOptions) run(ctx context.Context, out, errOut io.Writer, name string, positional []string) error {
	// A version the Go module proxy does not serve is answered all the
	// same, with a note on stderr (see ReleaseVersion).
	parse := func(flagName, s string) (*version.Version, error) {
		v, note, err := ReleaseVersion(ctx, flagName, s)
		if note != "" {
			fmt.Fprintf(errOut, "%s: note: %s\n", name, note)
		}
		return v, err
	}
	format, err := reports.ParseFormat(o.format, reports.OracleFormats...)
	if err != nil {
		return Usagef("%v", err)
	}
	host, err := skew.ParseRuntime(o.runtime)
	if err != nil {
		return Usagef("--runtime: %v", err)
	}
	if host.AppArmor, err = onOff("apparmor", o.apparmor); err != nil {
		return err
	}
	if host.Seccomp, err = onOff("seccomp", o.seccomp); err != nil {
		return err
	}
	switch {
	case o.deviations != "":
		if len(positional) > 0 || o.apiserver != "" || o.kubelet != "" || o.upgrade != "" {
			return Usagef("--deviations takes a range of minors only, e.g. --deviations 1.29..1.37")
		}
		from, to, err := release.ParseMinorRange(o.deviations)
		if err != nil {
			return Usagef("--deviations: %v", err)
		}
		cmdline := fmt.Sprintf("skewproof simulate --deviations %s..%s%s --format %s", from, to, reports.RuntimeFlag(host), o.format)
		return reports.WriteDeviations(out, format, from, to, skew.DeviationsOn(from, to, host), cmdline)
	case o.upgrade != "":
		if len(positional) != 1 || o.apiserver != "" || o.kubelet != "" {
			return Usagef("--upgrade takes exactly two versions and no --apiserver/--kubelet, e.g. --upgrade 1.33.13 1.37.2")
		}
		from, err := parse("--upgrade FROM", o.upgrade)
		if err != nil {
			return err
		}
		to, err := parse("--upgrade TO", positional[0])
		if err != nil {
			return err
		}
		changes, err := skew.Upgrade(from, to, host)
		if err != nil {
			return Usagef("%v", err)
		}
		cmdline := fmt.Sprintf("skewproof simulate --upgrade %s %s%s --format %s", from, to, reports.HostFlags(host), o.format)
		return reports.WriteUpgrade(out, format, from.String(), to.String(), changes, cmdline, reports.UpgradeNote(from, to))
	case len(positional) > 0:
		return Usagef("unexpected argument %q; versions are given with --apiserver and --kubelet", positional[0])
	case o.apiserver == "":
		return Usagef("--apiserver is required, e.g. skewproof simulate --apiserver 1.37.2 --kubelet 1.34.4")
	}
	apiserver, err := parse("--apiserver", o.apiserver)
	if err != nil {
		return err
	}
	kubelet := apiserver
	if o.kubelet != "" {
		if kubelet, err = parse("--kubelet", o.kubelet); err != nil {
			return err
		}
	}
	es, err := skew.Simulate(apiserver, kubelet, host)
	if err != nil {
		return Usagef("%v", err)
	}
	cmdline := fmt.Sprintf("skewproof simulate --apiserver %s --kubelet %s%s --format %s", apiserver, kubelet, reports.HostFlags(host), o.format)
	return reports.WriteSimulation(out, format, es, cmdline)
}

func onOff(name, v string) (bool, error) {
	switch v {
	case "on", "true", "yes":
		return true, nil
	case "off", "false", "no":
		return false, nil
	}
	return false, Usagef("--%s %q: use on or off", name, v)
}

// ReleaseVersion parses a version for simulate. The oracle needs no sources,
// so a release the Go module proxy does not serve (an existing cluster may
// run one, and a vendor bundle names it in its 'skewproof simulate' command)
// is answered too: the note then says, in one line, that skewproof cannot
// build it, naming the served releases of its minor (or all of them). Where
// no rule's sources were read at that version the rules answer skip, "not
// researched". The note is empty when the version is served or when the
// served list cannot be had (simulate works without it).
func ReleaseVersion(ctx context.Context, flagName, s string) (*version.Version, string, error) {
	v, err := release.ParseVersion(s)
	if err != nil {
		return nil, "", Usagef("%s: %v", flagName, err)
	}
	list, err := served.Versions(ctx)
	if err != nil {
		return v, "", nil
	}
	if err := release.CheckServedIn(list, v); err != nil {
		return v, fmt.Sprintf("%s: %v; skewproof cannot build it, the oracle answers for it all the same", flagName, err), nil
	}
	return v, "", nil
}
