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
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/reports"
)

// suitePackage is the Go package of a suite, relative to the module root.
func suitePackage(name string) string { return "./suites/" + name }

// suiteTests are the Go test functions that run the suites.
var suiteTests = map[string]string{"seccomp": "TestSeccomp", "apparmor": "TestAppArmor", "profiles": "TestProfiles"}

// suiteTest is the Go test function that runs a suite.
func suiteTest(name string) string {
	if t, ok := suiteTests[name]; ok {
		return t
	}
	return "Test" + strings.ToUpper(name[:1]) + name[1:]
}

// partitioned lists the suites whose specs are declared per node (API
// rules once, kubelet rules per worker), so that each worker's specs run
// in a process of their own.
var partitioned = map[string]bool{"seccomp": true, "apparmor": true}

func init() {
	register(command{name: "run", summary: "run the conformance suites on a new cluster (--apiserver, --kubelets) or an existing one (--kubeconfig)", run: runSuite})
}

type runOptions struct {
	name, apiserver, kubeconfig, labelFilter, junitDir, suite string
	agentImg, appArmorNode                                    string
	suites                                                    []string
	kubelets                                                  []string
	keep, parallel                                            bool
	timeout                                                   time.Duration
	images                                                    nodeImageFlag
	gates                                                     featureGatesFlag
}

func runSuite(ctx context.Context, args []string) error {
	fs := newFlagSet("run")
	o := runOptions{images: nodeImageFlag{}, gates: featureGatesFlag{}}
	fs.StringVar(&o.name, "name", "skewproof-run", "cluster name (a new cluster), or the name recorded in the report (--kubeconfig)")
	fs.StringVar(&o.apiserver, "apiserver", "", "kube-apiserver version of a new cluster, e.g. 1.37.2")
	kubelets := fs.String("kubelets", "", "comma-separated kubelet versions of a new cluster, one worker each (default: the apiserver version)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "run against this existing cluster instead of creating one")
	fs.StringVar(&o.labelFilter, "label-filter", "", "Ginkgo label filter, e.g. 'kubelet && !failure' or 'seccomp-kubelet-enforce' (ids with '/' replaced by '-')")
	fs.StringVar(&o.junitDir, "junit-dir", "_artifacts", "directory for junit-<cluster>.xml and the suite log")
	fs.BoolVar(&o.keep, "keep", false, "keep the cluster (and leftover namespaces) after the run")
	fs.BoolVar(&o.parallel, "parallel", true, "run the API server rules and each worker's kubelet rules in concurrent suite processes")
	ids := fs.String("ids", "", "comma-separated catalogue ids to run, e.g. seccomp/kubelet/enforce,seccomp/failure/row-4 (ANDed with --label-filter)")
	rerun := fs.String("rerun-failed", "", "a JUnit file of an earlier run: run only the specs that failed there, on the nodes they failed on")
	suites := fs.String("suites", "seccomp,apparmor", "comma-separated suites (packages under suites/) to run one after the other: seccomp, apparmor, profiles")
	fs.StringVar(&o.suite, "suite", "", "compiled binary of the one suite of --suites (default: built with 'go test -c ./suites/NAME' from the source tree)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "limit for the suite run")
	fs.StringVar(&o.agentImg, "agent-image", "", "node agent image present on every node (default: built from this binary and loaded into the kind node containers; required with --kubeconfig when the nodes are not local containers)")
	fs.StringVar(&o.appArmorNode, "apparmor-node", "", appArmorNodeUsage)
	fs.Var(o.gates, "feature-gates", "feature gates for every component of a new cluster, e.g. AppArmor=false (where the version still allows it)")
	fs.Var(o.images, "node-image", "prebuilt node image for the control plane (REF), or for one kubelet version (VERSION=REF); repeatable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	o.kubelets = splitList(*kubelets)
	var sel []string
	if *ids != "" {
		sel = append(sel, idFilter(splitList(*ids), nil))
	}
	if *rerun != "" {
		f, err := failedFilter(*rerun)
		if err != nil {
			return usagef("--rerun-failed: %v", err)
		}
		sel = append(sel, f)
	}
	if o.labelFilter != "" {
		sel = append(sel, o.labelFilter)
	}
	if len(sel) > 1 {
		o.labelFilter = "(" + strings.Join(sel, ") && (") + ")"
	} else if len(sel) == 1 {
		o.labelFilter = sel[0]
	}
	for _, n := range strings.Split(*suites, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if strings.ContainsAny(n, "/. ") {
			return usagef("--suites: %q is not a suite name (a package under suites/, e.g. seccomp)", n)
		}
		o.suites = append(o.suites, n)
	}
	switch {
	case len(o.suites) == 0:
		return usagef("--suites: give at least one suite, e.g. seccomp")
	case o.suite != "" && len(o.suites) > 1:
		return usagef("--suite names one binary; give a single suite in --suites")
	case o.kubeconfig != "" && o.appArmorNode != "":
		return usagef("--apparmor-node adds a node to a new cluster; it cannot join an existing one (--kubeconfig)")
	case o.kubeconfig != "" && len(o.gates) > 0:
		return usagef("--feature-gates applies to a new cluster; an existing cluster (--kubeconfig) keeps its own")
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
		if err := checkAppArmorNode(ctx, o.apiserver, o.appArmorNode); err != nil {
			return err
		}
		if err := checkPair(ctx, o.apiserver, o.kubelets, needSources); err != nil {
			return err
		}
		if err := o.gates.check(o.apiserver, o.kubelets); err != nil {
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

	// The suite binaries first: a compile error should not cost a cluster.
	bins := map[string]string{}
	if o.suite != "" {
		if _, err := os.Stat(o.suite); err != nil {
			return usagef("--suite: %v", err)
		}
		bins[o.suites[0]] = o.suite
	} else {
		tmp, err := os.MkdirTemp("", "skewproof-suite-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		for _, name := range o.suites {
			if bins[name], err = buildSuite(ctx, p, tmp, name); err != nil {
				return err
			}
		}
	}

	kubeconfig := o.kubeconfig
	var nodes, workers []string
	if kubeconfig == "" {
		kubeconfig = clusters.DefaultKubeconfig(o.name)
		// Deleted on success, failure and interrupt (ctx is cancelled on
		// SIGINT/SIGTERM), unless --keep.
		defer func() {
			if o.keep {
				p.Step("keeping cluster %s (--keep); delete it with 'skewproof cluster down --name %s'", o.name, o.name)
				return
			}
			if err != nil {
				for _, f := range clusters.SaveAppArmorNodeConsoles(o.name, junitDir) {
					p.Step("AppArmor node console log kept: %s", f)
				}
			}
			dctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if derr := p.Timed("deleting cluster "+o.name, func() error { return clusters.Down(dctx, o.name, kubeconfig, p) }); derr != nil {
				err = errors.Join(err, derr)
			}
		}()
		c, err := clusters.Up(ctx, clusters.UpOptions{Name: o.name, APIServer: o.apiserver, Kubelets: o.kubelets,
			Kubeconfig: kubeconfig, NodeImages: o.images, CgroupV1: clusters.DetectHost().CgroupVersion == 1, Progress: p,
			FeatureGates: o.gates, AppArmorHost: clusters.DetectHost().AppArmor, AppArmorNode: o.appArmorNode, ArtifactsDir: junitDir})
		if err != nil {
			return fmt.Errorf("bringing up cluster %s: %w", o.name, err)
		}
		for _, n := range c.Nodes {
			nodes = append(nodes, n.Name)
			if n.Role != "control-plane" {
				workers = append(workers, n.Name)
			}
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
			if _, cp := n.Labels["node-role.kubernetes.io/control-plane"]; !cp {
				workers = append(workers, n.Name)
			}
		}
	}

	nodeAccess := "none"
	if allDockerContainers(ctx, nodes) {
		nodeAccess = "docker"
	}
	image, err := o.agentImage(ctx, p, nodes, nodeAccess)
	if err != nil {
		return err
	}
	var appArmorNodes map[string]bool
	if slices.Contains(o.suites, "seccomp") || slices.Contains(o.suites, "apparmor") {
		if appArmorNodes, err = o.installFixtures(ctx, p, kubeconfig, image.Ref, len(nodes)); err != nil {
			return err
		}
		if !o.keep && o.kubeconfig != "" {
			// The agent removes the files when their profiles go (a new
			// cluster is deleted as a whole).
			defer func() {
				if derr := removeFixtures(p, kubeconfig); derr != nil {
					err = errors.Join(err, derr)
				}
			}()
		}
	}

	junit := filepath.Join(junitDir, "junit-"+o.name+".xml")
	_ = os.Remove(junit)
	runID := rand.String(6)
	env := []string{"SKEWPROOF_KUBECONFIG=" + kubeconfig, "SKEWPROOF_CLUSTER=" + o.name,
		"SKEWPROOF_NODE_ACCESS=" + nodeAccess, "SKEWPROOF_RUN_ID=" + runID, "SKEWPROOF_AGENT_IMAGE=" + image.Ref, "SKEWPROOF_AGENT_IMAGE_NOTE=" + image.Note}
	if o.keep {
		env = append(env, "SKEWPROOF_KEEP=1")
	}
	if len(appArmorNodes) > 0 {
		var kv []string
		for n, on := range appArmorNodes {
			kv = append(kv, fmt.Sprintf("%s=%v", n, on))
		}
		sort.Strings(kv)
		env = append(env, "SKEWPROOF_APPARMOR_NODES="+strings.Join(kv, ","))
	}
	// The RuntimeClasses of failure row 1, shared by the processes: created
	// here, so no process deletes them while another still uses them.
	created, err := ensureRuntimeClasses(ctx, kubeconfig, runID)
	if len(created) > 0 {
		defer deleteRuntimeClasses(kubeconfig, created)
	}
	if err != nil {
		return err
	}
	var suites []reports.Suite
	var suiteErr error
	var logs []string
	// Suites run one after the other: they change the same nodes.
	for _, name := range o.suites {
		if ctx.Err() != nil {
			break
		}
		s, logGlob, err := o.runOne(ctx, p, name, bins[name], junitDir, workers, env)
		logs = append(logs, logGlob)
		suiteErr = errors.Join(suiteErr, err)
		suites = append(suites, s...)
	}
	if o.kubeconfig != "" && !o.keep {
		deleteRunNamespaces(kubeconfig, runID, p)
	}
	if len(suites) > 0 {
		if err := reports.WriteJUnitFile(junit, suites...); err != nil {
			return err
		}
	}
	var results []reports.Result
	for _, s := range suites {
		results = append(results, s.Results...)
	}
	fmt.Println()
	reports.WriteSummary(os.Stdout, results)
	fmt.Printf("JUnit: %s\nlogs:  %s\n", junit, strings.Join(logs, " "))
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted; partial report in %s", junit)
	}
	if n := reports.Count(results)[reports.Fail]; n > 0 {
		return fmt.Errorf("%d of %d specs failed; see %s", n, len(results), junit)
	}
	if suiteErr != nil {
		return fmt.Errorf("a suite failed outside the specs: %w (logs: %s)", suiteErr, strings.Join(logs, " "))
	}
	if len(results) == 0 {
		return fmt.Errorf("no spec ran (label filter %q?)", o.labelFilter)
	}
	return nil
}

// buildSuite compiles the suite with 'go test -c' from the source tree.
func buildSuite(ctx context.Context, p *clusters.Progress, dir, name string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", usagef("%v; run from the skewproof source tree or pass --suite", err)
	}
	if _, err := os.Stat(filepath.Join(root, "suites", name)); err != nil {
		return "", usagef("--suites: no suite %q (no directory suites/%s)", name, name)
	}
	bin := filepath.Join(dir, name+".test")
	err = p.Timed("compiling the "+name+" suite", func() error {
		cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, suitePackage(name))
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("go test -c %s: %v\n%s", suitePackage(name), err, strings.TrimSpace(string(out)))
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

// allLocal reports whether commands can run on every node from this host
// (kind node containers and User-Mode Linux nodes).
func allLocal(ctx context.Context, nodes []string) bool {
	for _, n := range nodes {
		if !clusters.IsLocalNode(ctx, n) {
			return false
		}
	}
	return len(nodes) > 0
}

// runSuiteBinary runs the compiled suite, prints one progress line per
// finished spec and keeps the full output in logPath. On interrupt the
// suite gets SIGINT, so that Ginkgo runs its cleanup (namespaces).
func runSuiteBinary(ctx context.Context, p *clusters.Progress, bin, test, logPath string, timeout time.Duration, labelFilter string, env []string) error {
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	args := []string{"-test.run", "^" + test + "$", "-test.timeout", timeout.String(), "-test.v", "-ginkgo.no-color", "-ginkgo.v"}
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
	err = cmd.Run()
	pw.Close()
	<-done
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
	// Wait until they are gone, so that nothing is left behind on exit.
	for ctx.Err() == nil {
		nl, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: "skewproof.io/run=" + runID})
		if err != nil || len(nl.Items) == 0 {
			return
		}
		time.Sleep(time.Second)
	}
	p.Step("namespaces labelled skewproof.io/run=%s are still terminating", runID)
}

// partition is one suite process: a name and a Ginkgo label filter.
type partition struct{ name, filter string }

// partitions splits the suite: the API server rules in one process and
// each worker's kubelet rules in another, so the workers are exercised
// concurrently (specs of one node stay sequential; failure row 4 changes a
// node's files).
func partitions(parallel bool, workers []string) []partition {
	if !parallel || len(workers) == 0 {
		return []partition{{name: "all"}}
	}
	parts := []partition{{name: "api", filter: "api"}}
	for _, w := range workers {
		parts = append(parts, partition{name: w, filter: "kubelet && node: containsAny " + w})
	}
	return parts
}

// ensureRuntimeClasses creates the RuntimeClasses of the node images'
// restricted runtime handlers (failure row 1 of both KEPs) that do not exist
// yet and returns those it created.
func ensureRuntimeClasses(ctx context.Context, kubeconfig, runID string) ([]string, error) {
	cs, err := clusters.Clientset(kubeconfig)
	if err != nil {
		return nil, err
	}
	return clusters.EnsureRestrictedRuntimeClasses(ctx, cs, map[string]string{"skewproof.io/run": runID})
}

func deleteRuntimeClasses(kubeconfig string, names []string) {
	cs, err := clusters.Clientset(kubeconfig)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = clusters.DeleteRuntimeClasses(ctx, cs, names)
}

// runOne runs one suite, the seccomp and AppArmor suites split into concurrent processes
// (API rules, then each worker's kubelet rules), and returns its results.
func (o runOptions) runOne(ctx context.Context, p *clusters.Progress, name, bin, junitDir string, workers, env []string) ([]reports.Suite, string, error) {
	logPath := filepath.Join(junitDir, name+"-"+o.name+".log")
	parts := []partition{{name: "all"}}
	if partitioned[name] {
		parts = partitions(o.parallel, workers)
	}
	start := time.Now()
	p.Step("running the %s suite in %d process(es)", name, len(parts))
	errs := make([]error, len(parts))
	files := make([]string, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		files[i] = filepath.Join(junitDir, fmt.Sprintf("junit-%s.%s.xml", o.name, name))
		plog := logPath
		if len(parts) > 1 {
			files[i] = filepath.Join(junitDir, fmt.Sprintf("junit-%s.%s.part-%s.xml", o.name, name, part.name))
			plog = filepath.Join(junitDir, fmt.Sprintf("%s-%s.part-%s.log", name, o.name, part.name))
		}
		_ = os.Remove(files[i])
		filter := part.filter
		if o.labelFilter != "" {
			filter = "(" + o.labelFilter + ") && (" + part.filter + ")"
			if part.filter == "" {
				filter = o.labelFilter
			}
		}
		wg.Add(1)
		go func(i int, plog, filter string) {
			defer wg.Done()
			errs[i] = runSuiteBinary(ctx, p, bin, suiteTest(name), plog, o.timeout, filter, append([]string{"SKEWPROOF_JUNIT=" + files[i]}, env...))
		}(i, plog, filter)
	}
	wg.Wait()
	p.Step("%s suite finished in %.1fs", name, time.Since(start).Seconds())
	logGlob := logPath
	if len(parts) > 1 {
		logGlob = filepath.Join(junitDir, fmt.Sprintf("%s-%s.part-*.log", name, o.name))
	}
	suiteErr := errors.Join(errs...)
	read, err := reports.ReadJUnitFiles(files...)
	if err != nil {
		return nil, logGlob, errors.Join(suiteErr, fmt.Errorf("the %s suite wrote no report (log: %s): %w", name, logGlob, err))
	}
	merged := reports.Suite{Name: name, Cluster: o.name, Timestamp: start}
	for _, s := range read {
		merged.Results = append(merged.Results, s.Results...)
	}
	for _, f := range files {
		os.Remove(f)
	}
	return []reports.Suite{merged}, logGlob, suiteErr
}

// idLabel is the Ginkgo label of a catalogue id ('/' is not allowed in labels).
func idLabel(id string) string { return strings.ReplaceAll(strings.TrimSpace(id), "/", "-") }

// idFilter selects the specs of ids, on the given nodes when nodes[id] is set.
func idFilter(ids []string, nodes map[string][]string) string {
	var alts []string
	for _, id := range ids {
		f := idLabel(id)
		if ns := nodes[id]; len(ns) > 0 {
			f = "(" + f + " && node: containsAny {" + strings.Join(ns, ", ") + "})"
		}
		alts = append(alts, f)
	}
	return strings.Join(alts, " || ")
}

// failedFilter selects the specs that failed in a JUnit file of an earlier run.
func failedFilter(junit string) (string, error) {
	suites, err := reports.ReadJUnitFiles(junit)
	if err != nil {
		return "", err
	}
	var ids []string
	nodes := map[string][]string{}
	seen := map[string]bool{}
	for _, s := range suites {
		for _, r := range s.Results {
			if r.Verdict != reports.Fail || r.ID == "" {
				continue
			}
			if !seen[r.ID] {
				seen[r.ID] = true
				ids = append(ids, r.ID)
			}
			if r.Node != "" {
				nodes[r.ID] = append(nodes[r.ID], r.Node)
			} else {
				nodes[r.ID] = nil
			}
		}
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("no failed spec in %s", junit)
	}
	// An id that failed at cluster level runs everywhere it applies.
	for _, id := range ids {
		for _, n := range nodes[id] {
			if n == "" {
				nodes[id] = nil
			}
		}
	}
	return idFilter(ids, nodes), nil
}

// agentImage is the node agent image: --agent-image, or one built from this
// (static) binary and loaded into kind node containers.
func (o runOptions) agentImage(ctx context.Context, p *clusters.Progress, nodes []string, nodeAccess string) (profiles.AgentImage, error) {
	if o.agentImg != "" {
		return profiles.AgentImage{Ref: o.agentImg}, nil
	}
	if nodeAccess != "docker" && !allLocal(ctx, nodes) {
		return profiles.AgentImage{}, usagef("the nodes are not local containers: pass --agent-image with a skewproof agent image present on every node (see docs/profiles/README.md)")
	}
	var img profiles.AgentImage
	err := p.Timed(fmt.Sprintf("loading the agent image into %d nodes", len(nodes)), func() (err error) {
		img, err = agentImageFromSelf(func(bin string) (profiles.AgentImage, error) { return profiles.LoadAgentImage(ctx, bin, nodes) })
		if err != nil {
			return fmt.Errorf("%w; or pass --agent-image", err)
		}
		return nil
	})
	return img, err
}

// installFixtures deploys the agent of the fixtures namespace and installs
// the seccomp fixtures and, when the AppArmor suite runs, the AppArmor ones;
// it returns per node whether AppArmor profiles load there (the agent
// reports Unsupported on a node without AppArmor).
func (o runOptions) installFixtures(ctx context.Context, p *clusters.Progress, kubeconfig, image string, nodes int) (map[string]bool, error) {
	c, err := profiles.Connect(kubeconfig, profiles.FixturesNamespace)
	if err != nil {
		return nil, err
	}
	timeout := 3 * time.Minute
	if o.appArmorNode != "" || clusters.AppArmorNodeRunning(o.name) {
		// The agent starts and syncs slowly on a User-Mode Linux node.
		timeout = 10 * time.Minute
	}
	err = p.Timed(fmt.Sprintf("installing %d seccomp profiles through the agent on %d nodes", len(profiles.Seccomp()), nodes), func() error {
		_, err := profiles.InstallFixtures(ctx, c, image, timeout)
		return err
	})
	if err != nil || !slices.Contains(o.suites, "apparmor") {
		return nil, err
	}
	var loaded map[string]bool
	err = p.Timed(fmt.Sprintf("installing %d AppArmor profiles through the agent on %d nodes", len(profiles.AppArmor()), nodes), func() (err error) {
		loaded, err = profiles.InstallAppArmorFixtures(ctx, c, timeout)
		return err
	})
	if err == nil {
		var on []string
		for n, l := range loaded {
			if l {
				on = append(on, n)
			}
		}
		sort.Strings(on)
		p.Step("nodes with AppArmor (profiles loaded): %d of %d %v", len(on), len(loaded), on)
	}
	return loaded, err
}

func removeFixtures(p *clusters.Progress, kubeconfig string) error {
	c, err := profiles.Connect(kubeconfig, profiles.FixturesNamespace)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return p.Timed("removing the fixture profiles and their agent", func() error { return c.Teardown(ctx, false) })
}
