package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/go-version"

	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/served"
)

// oracleOut is where simulate and matrix write; tests replace it.
var oracleOut io.Writer = os.Stdout

func init() {
	register(command{
		name:    "simulate",
		summary: "print the expected seccomp/AppArmor outcomes for a kube-apiserver/kubelet pair or an upgrade",
		run:     runSimulate,
	})
}

func runSimulate(ctx context.Context, args []string) error {
	fs := newFlagSet("simulate")
	apiserverFlag := fs.String("apiserver", "", "kube-apiserver version, e.g. 1.37.2")
	kubeletFlag := fs.String("kubelet", "", "kubelet version, e.g. 1.34.4 (default: the apiserver version)")
	upgradeFlag := fs.String("upgrade", "", "upgrade mode: --upgrade FROM TO prints only what changes for workloads")
	deviationsFlag := fs.String("deviations", "", "list every deviation between the KEP plans and upstream for a range of minors, e.g. 1.29..1.37")
	apparmorFlag := fs.String("apparmor", "on", "whether the node has AppArmor: on|off")
	seccompFlag := fs.String("seccomp", "on", "whether the node has seccomp filters: on|off")
	runtimeFlag := fs.String("runtime", "containerd", "container runtime of the node")
	formatFlag := fs.String("format", "text", "output format: text|json|markdown")
	fs.SetOutput(io.Discard)
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stderr)
			fmt.Fprintln(os.Stderr, "usage: skewproof simulate --apiserver X.Y.Z [--kubelet A.B.C] [--apparmor on|off] [--format text|json|markdown]\n       skewproof simulate --upgrade FROM TO [--format text|json|markdown]")
			fs.PrintDefaults()
			return err
		}
		return usagef("%v; run 'skewproof simulate -h'", err)
	}
	switch *formatFlag {
	case "text", "json", "markdown":
	default:
		return usagef("unknown --format %q; use text, json or markdown", *formatFlag)
	}
	host := skew.HostFacts{Runtime: *runtimeFlag}
	if host.AppArmor, err = onOff("apparmor", *apparmorFlag); err != nil {
		return err
	}
	if host.Seccomp, err = onOff("seccomp", *seccompFlag); err != nil {
		return err
	}

	if *deviationsFlag != "" {
		if len(positional) > 0 || *apiserverFlag != "" || *kubeletFlag != "" || *upgradeFlag != "" {
			return usagef("--deviations takes a range of minors only, e.g. --deviations 1.29..1.37")
		}
		from, to, err := skew.ParseMinorRange(*deviationsFlag)
		if err != nil {
			return usagef("--deviations: %v", err)
		}
		cmdline := fmt.Sprintf("skewproof simulate --deviations %s..%s --format %s", from, to, *formatFlag)
		return reports.WriteDeviations(oracleOut, *formatFlag, from, to, skew.Deviations(from, to), cmdline)
	}

	if *upgradeFlag != "" {
		if len(positional) != 1 || *apiserverFlag != "" || *kubeletFlag != "" {
			return usagef("--upgrade takes exactly two versions and no --apiserver/--kubelet, e.g. --upgrade 1.33.13 1.37.2")
		}
		from, err := servedVersion(ctx, "--upgrade FROM", *upgradeFlag)
		if err != nil {
			return err
		}
		to, err := servedVersion(ctx, "--upgrade TO", positional[0])
		if err != nil {
			return err
		}
		changes, err := skew.Upgrade(from, to, host)
		if err != nil {
			return usagef("%v", err)
		}
		note := upgradeNote(from, to)
		cmdline := fmt.Sprintf("skewproof simulate --upgrade %s %s%s --format %s", from, to, hostFlags(host), *formatFlag)
		return reports.WriteUpgrade(oracleOut, *formatFlag, from.String(), to.String(), changes, cmdline, note)
	}

	if len(positional) > 0 {
		return usagef("unexpected argument %q; versions are given with --apiserver and --kubelet", positional[0])
	}
	if *apiserverFlag == "" {
		return usagef("--apiserver is required, e.g. skewproof simulate --apiserver 1.37.2 --kubelet 1.34.4")
	}
	apiserver, err := servedVersion(ctx, "--apiserver", *apiserverFlag)
	if err != nil {
		return err
	}
	kubelet := apiserver
	if *kubeletFlag != "" {
		if kubelet, err = servedVersion(ctx, "--kubelet", *kubeletFlag); err != nil {
			return err
		}
	}
	es, err := skew.Simulate(apiserver, kubelet, host)
	if err != nil {
		return usagef("%v", err)
	}
	cmdline := fmt.Sprintf("skewproof simulate --apiserver %s --kubelet %s%s --format %s", apiserver, kubelet, hostFlags(host), *formatFlag)
	return reports.WriteSimulation(oracleOut, *formatFlag, es, cmdline)
}

// upgradeNote says whether the control plane can run ahead of the kubelets
// for the whole upgrade.
func upgradeNote(from, to *version.Version) string {
	if err := skew.CheckSkew(to, from); err != nil {
		last := skew.Minor{Major: skew.MinorOf(from).Major, Minor: skew.MinorOf(from).Minor + skew.MaxKubeletSkew(to)}
		return fmt.Sprintf("Kubelets at v%s cannot stay behind a v%s control plane (the skew policy allows %d minors): upgrade in steps, and upgrade the kubelets before the control plane goes past v%s.",
			from, to, skew.MaxKubeletSkew(to), last)
	}
	return fmt.Sprintf("Kubelets at v%s may stay behind a v%s control plane while it is upgraded; run 'skewproof simulate --apiserver %s --kubelet %s' for that state.", from, to, to, from)
}

func hostFlags(h skew.HostFacts) string {
	s := ""
	if !h.AppArmor {
		s += " --apparmor off"
	}
	if !h.Seccomp {
		s += " --seccomp off"
	}
	if h.Runtime != "containerd" {
		s += " --runtime " + h.Runtime
	}
	return s
}

func onOff(name, v string) (bool, error) {
	switch v {
	case "on", "true", "yes":
		return true, nil
	case "off", "false", "no":
		return false, nil
	}
	return false, usagef("--%s %q: use on or off", name, v)
}

// servedVersion parses a version and checks that its sources are served.
func servedVersion(ctx context.Context, flagName, s string) (*version.Version, error) {
	v, err := skew.ParseVersion(s)
	if err != nil {
		return nil, usagef("%s: %v", flagName, err)
	}
	list, err := served.Versions(ctx)
	if err != nil {
		return nil, err
	}
	for _, sv := range list {
		if sv.Equal(v) {
			return v, nil
		}
	}
	return nil, usagef("%s: %v; pick one of those", flagName, skew.CheckServedIn(list, v))
}

// parseInterspersed parses flags that may follow positional arguments
// ("--upgrade 1.33.13 1.37.2 --format markdown").
func parseInterspersed(fs interface {
	Parse([]string) error
	Args() []string
}, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}
