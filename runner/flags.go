package runner

import (
	"time"

	"github.com/spf13/pflag"
)

// SharedFlags are the settings of a run that both front ends take as
// flags: 'skewproof run' (cmd/skewproof) and the in-cluster entrypoint's
// E2E_EXTRA_ARGS (package runner/incluster). BindFlags declares them, name
// and usage, once for both; each front end starts from its own defaults
// (CLIDefaults, InClusterDefaults).
type SharedFlags struct {
	// SuiteList is --suites, comma-separated (ParseSuites reads it); empty:
	// every suite of the suite binary.
	SuiteList            string
	LabelFilter          string
	AgentImage           string
	Timeout              time.Duration
	Name                 string
	FlakeAttempts        int
	AllowFlaky           bool
	AllowedNotReadyNodes int
	Certify              bool
}

// CLIDefaults are the defaults of 'skewproof run'.
func CLIDefaults() SharedFlags {
	return SharedFlags{Timeout: 30 * time.Minute, Name: "skewproof-run", FlakeAttempts: DefaultFlakeAttempts}
}

// InClusterDefaults are the defaults of the in-cluster entrypoint. They
// differ from CLIDefaults on purpose in two flags: --name is "in-cluster"
// (the CLI's names the cluster it brings up) and --timeout is an hour.
func InClusterDefaults() SharedFlags {
	d := CLIDefaults()
	d.Name = "in-cluster"
	d.Timeout = time.Hour
	return d
}

// BindFlags declares the shared flags on fs in this order, with f's values
// as their defaults; parsing fs sets f. The usage of each is true of both
// front ends: the CLI's help, the entrypoint's error messages and
// docs/cli.md show it.
func (f *SharedFlags) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.SuiteList, "suites", f.SuiteList, "comma-separated suites to run, e.g. seccomp,apparmor (default: every suite of the suite binary)")
	fs.StringVar(&f.LabelFilter, "label-filter", f.LabelFilter, "Ginkgo label filter, e.g. 'kubelet && !failure' or 'seccomp-kubelet-enforce' (ids with '/' replaced by '-')")
	fs.StringVar(&f.AgentImage, "agent-image", f.AgentImage, "node agent image present on every node (default: in the cluster, the entrypoint's own image; "+
		"otherwise one built from this binary and loaded into the nodes, which must then be local containers)")
	fs.DurationVar(&f.Timeout, "timeout", f.Timeout, "limit of each suite process's specs, their retries included (Ginkgo's --timeout in the e2e binary: the spec it interrupts and every spec not yet run are failures); the cluster's set-up is not counted")
	fs.StringVar(&f.Name, "name", f.Name, "cluster name: a new cluster's, or the name an existing one is recorded under in the report")
	fs.IntVar(&f.FlakeAttempts, "flake-attempts", f.FlakeAttempts, "attempts of a failed spec: a pass on a later attempt is reported flaky, with the earlier failure, "+
		"and fails the run unless --allow-flaky (1: no retry)")
	fs.BoolVar(&f.AllowFlaky, "allow-flaky", f.AllowFlaky, "tolerate flaky specs: they do not fail the run and their JUnit cases carry no <failure> (recorded in run.json and the JUnit suite's properties)")
	fs.IntVar(&f.AllowedNotReadyNodes, "allowed-not-ready-nodes", f.AllowedNotReadyNodes, "how many nodes of an existing cluster may be not Ready without failing the run; "+
		"their kubelet rules are skipped, naming the node (a cluster skewproof brings up allows none)")
	fs.BoolVar(&f.Certify, "certify", f.Certify, "a certification run: every catalogue id that applies to a node's versions and runtime must be judged on that node; "+
		"a skip for anything but a fact of the release (a host without AppArmor, no node access, a feature gate's setting) fails the run with its remedy; "+
		"every suite, no narrowing, no tolerated flakes or nodes (recorded in run.json, the JUnit suites' properties and the bundle)")
}
