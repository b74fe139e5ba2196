package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/reports"
)

// suitePackage is the Go package of the seccomp suite, relative to the
// module root.
const suitePackage = "./suites/seccomp"

func init() {
	register(command{name: "run", summary: "run the seccomp conformance suite on a new cluster (--apiserver, --kubelets) or an existing one (--kubeconfig)", run: runSuite})
}

type runOptions struct {
	name, apiserver, kubeconfig, labelFilter, junitDir, suite string
	kubelets                                                  []string
	keep                                                      bool
	timeout                                                   time.Duration
	images                                                    nodeImageFlag
}

func runSuite(ctx context.Context, args []string) error {
	fs := newFlagSet("run")
	o := runOptions{images: nodeImageFlag{}}
	fs.StringVar(&o.name, "name", "skewproof-run", "cluster name (a new cluster), or the name recorded in the report (--kubeconfig)")
	fs.StringVar(&o.apiserver, "apiserver", "", "kube-apiserver version of a new cluster, e.g. 1.37.2")
	kubelets := fs.String("kubelets", "", "comma-separated kubelet versions of a new cluster, one worker each (default: the apiserver version)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "run against this existing cluster instead of creating one")
	fs.StringVar(&o.labelFilter, "label-filter", "", "Ginkgo label filter, e.g. 'kubelet && !failure' or 'seccomp-kubelet-enforce' (ids with '/' replaced by '-')")
	fs.StringVar(&o.junitDir, "junit-dir", "_artifacts", "directory for junit-<cluster>.xml and the suite log")
	fs.BoolVar(&o.keep, "keep", false, "keep the cluster (and leftover namespaces) after the run")
	fs.StringVar(&o.suite, "suite", "", "compiled suite binary (default: built with 'go test -c "+suitePackage+"' from the source tree)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "limit for the suite run")
	fs.Var(o.images, "node-image", "prebuilt node image for the control plane (REF), or for one kubelet version (VERSION=REF); repeatable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	o.kubelets = splitList(*kubelets)
	switch {
	case o.kubeconfig != "" && (o.apiserver != "" || len(o.kubelets) > 0):
		return usagef("give either --kubeconfig (an existing cluster) or --apiserver/--kubelets (a new one), not both")
	case o.kubeconfig == "" && o.apiserver == "":
		return usagef("give --apiserver and --kubelets to create a cluster, or --kubeconfig to use an existing one")
	case o.kubeconfig != "":
		if _, err := os.Stat(o.kubeconfig); err != nil {
			return usagef("--kubeconfig: %v", err)
		}
	default:
		o.apiserver = strings.TrimPrefix(o.apiserver, "v")
		if len(o.kubelets) == 0 {
			o.kubelets = []string{o.apiserver}
		}
		if err := validName(o.name); err != nil {
			return err
		}
		needSources := false
		for _, k := range append([]string{""}, o.kubelets...) {
			if _, ok := o.images[k]; !ok {
				needSources = true
			}
		}
		if err := checkPair(ctx, o.apiserver, o.kubelets, needSources); err != nil {
			return err
		}
	}
	if o.timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	return o.run(ctx)
}

func (o runOptions) run(ctx context.Context) (err error) {
	p := clusters.NewProgress(os.Stderr)
	if err := os.MkdirAll(o.junitDir, 0o755); err != nil {
		return fmt.Errorf("creating --junit-dir: %w", err)
	}
	junitDir, _ := filepath.Abs(o.junitDir)

	// The suite binary first: a compile error should not cost a cluster.
	bin := o.suite
	if bin == "" {
		tmp, err := os.MkdirTemp("", "skewproof-suite-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if bin, err = buildSuite(ctx, p, tmp); err != nil {
			return err
		}
	} else if _, err := os.Stat(bin); err != nil {
		return usagef("--suite: %v", err)
	}

	kubeconfig := o.kubeconfig
	var nodes []string
	if kubeconfig == "" {
		kubeconfig = clusters.DefaultKubeconfig(o.name)
		// Deleted on success, failure and interrupt (ctx is cancelled on
		// SIGINT/SIGTERM), unless --keep.
		defer func() {
			if o.keep {
				p.Step("keeping cluster %s (--keep); delete it with 'skewproof cluster down --name %s'", o.name, o.name)
				return
			}
			dctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if derr := p.Timed("deleting cluster "+o.name, func() error { return clusters.Down(dctx, o.name, kubeconfig, p) }); derr != nil {
				err = errors.Join(err, derr)
			}
		}()
		c, err := clusters.Up(ctx, clusters.UpOptions{Name: o.name, APIServer: o.apiserver, Kubelets: o.kubelets,
			Kubeconfig: kubeconfig, NodeImages: o.images, CgroupV1: clusters.DetectHost().CgroupVersion == 1, Progress: p})
		if err != nil {
			return fmt.Errorf("bringing up cluster %s: %w", o.name, err)
		}
		for _, n := range c.Nodes {
			nodes = append(nodes, n.Name)
		}
	} else {
		cs, err := clusters.Clientset(kubeconfig)
		if err != nil {
			return fmt.Errorf("reading --kubeconfig: %w", err)
		}
		nl, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing the nodes of %s: %w", kubeconfig, err)
		}
		for _, n := range nl.Items {
			nodes = append(nodes, n.Name)
		}
	}

	nodeAccess := "none"
	if allDockerContainers(ctx, nodes) {
		nodeAccess = "docker"
		if err := p.Timed(fmt.Sprintf("installing %d seccomp profiles on %d nodes", len(profiles.Seccomp()), len(nodes)), func() error {
			return profiles.FirstError(profiles.InstallAll(ctx, profiles.KindInstaller{Docker: clusters.Docker}, nodes, profiles.Seccomp()))
		}); err != nil {
			return err
		}
	} else {
		p.Step("nodes are not local containers: the profiles of profiles/seccomp must already be under <kubelet root>/seccomp/%s on every node; failure row 4 is skipped", profiles.Dir)
	}

	junit := filepath.Join(junitDir, "junit-"+o.name+".xml")
	logPath := filepath.Join(junitDir, "seccomp-"+o.name+".log")
	_ = os.Remove(junit)
	runID := rand.String(6)
	suiteErr := runSuiteBinary(ctx, p, bin, logPath, o.timeout, o.labelFilter, []string{
		"SKEWPROOF_KUBECONFIG=" + kubeconfig, "SKEWPROOF_JUNIT=" + junit, "SKEWPROOF_CLUSTER=" + o.name,
		"SKEWPROOF_NODE_ACCESS=" + nodeAccess, "SKEWPROOF_RUN_ID=" + runID,
	})
	if o.kubeconfig != "" && !o.keep {
		deleteRunNamespaces(kubeconfig, runID, p)
	}

	suites, rerr := reports.ReadJUnitFiles(junit)
	if rerr != nil {
		return errors.Join(suiteErr, fmt.Errorf("the suite wrote no report (log: %s): %w", logPath, rerr))
	}
	var results []reports.Result
	for _, s := range suites {
		results = append(results, s.Results...)
	}
	fmt.Println()
	reports.WriteSummary(os.Stdout, results)
	fmt.Printf("JUnit: %s\nlog:   %s\n", junit, logPath)
	if n := reports.Count(results)[reports.Fail]; n > 0 {
		return fmt.Errorf("%d of %d specs failed; see %s", n, len(results), junit)
	}
	if suiteErr != nil {
		return fmt.Errorf("the suite failed outside the specs: %w (log: %s)", suiteErr, logPath)
	}
	if len(results) == 0 {
		return fmt.Errorf("no spec ran (label filter %q?)", o.labelFilter)
	}
	return nil
}

// buildSuite compiles the suite with 'go test -c' from the source tree.
func buildSuite(ctx context.Context, p *clusters.Progress, dir string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", usagef("%v; run from the skewproof source tree or pass --suite", err)
	}
	bin := filepath.Join(dir, "seccomp.test")
	err = p.Timed("compiling the seccomp suite", func() error {
		cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, suitePackage)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("go test -c %s: %v\n%s", suitePackage, err, strings.TrimSpace(string(out)))
		}
		return nil
	})
	return bin, err
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/skewproof/skewproof\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("the skewproof source tree (go.mod) was not found above the current directory")
		}
		dir = parent
	}
}

func allDockerContainers(ctx context.Context, nodes []string) bool {
	if len(nodes) == 0 {
		return false
	}
	for _, n := range nodes {
		if _, err := clusters.Docker(ctx, "inspect", "--type", "container", "--format", "{{.Name}}", n); err != nil {
			return false
		}
	}
	return true
}

// runSuiteBinary runs the compiled suite, prints one progress line per
// finished spec and keeps the full output in logPath. On interrupt the
// suite gets SIGINT, so that Ginkgo runs its cleanup (namespaces).
func runSuiteBinary(ctx context.Context, p *clusters.Progress, bin, logPath string, timeout time.Duration, labelFilter string, env []string) error {
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	args := []string{"-test.run", "^TestSeccomp$", "-test.timeout", timeout.String(), "-test.v", "-ginkgo.no-color", "-ginkgo.v"}
	if labelFilter != "" {
		args = append(args, "-ginkgo.label-filter", labelFilter)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = time.Minute
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if r, ok := reports.ParseProgress(line); ok {
				p.Step("%s", reports.ProgressLine(r))
			}
		}
		io.Copy(io.Discard, pr)
	}()
	p.Step("running the seccomp suite (log: %s)", logPath)
	start := time.Now()
	err = cmd.Run()
	pw.Close()
	<-done
	p.Step("suite finished in %.1fs", time.Since(start).Seconds())
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// deleteRunNamespaces removes namespaces a suite run left behind on an
// existing cluster (the suite removes its own; this covers a crash).
func deleteRunNamespaces(kubeconfig, runID string, p *clusters.Progress) {
	cs, err := clusters.Clientset(kubeconfig)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nl, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: "skewproof.io/run=" + runID})
	if err != nil {
		return
	}
	for _, ns := range nl.Items {
		if ns.DeletionTimestamp == nil {
			p.Step("deleting leftover namespace %s", ns.Name)
			_ = cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		}
	}
}
