package harness

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/skewproof/skewproof/internal/rbac"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
)

// Suite is one family of the catalogue ("seccomp", "apparmor", "profiles")
// compiled into the e2e binary. Each suite package registers itself from
// an init function; suites/e2e imports them all (the layout of the
// Kubernetes e2e tests: specs in ordinary packages, one test main).
type Suite struct {
	// Family is the catalogue family of its ids and the first label of
	// each of its specs: the runner selects a suite by it.
	Family string
	// Smoke lists the ids of the quick subset (label "smoke").
	Smoke map[string]bool
	// Fixtures are what the runner sets up before the suite runs
	// (senv.FixtureSeccompProfiles, …): the binary declares them
	// (senv.Declare), and the runner reads them.
	Fixtures []string
	// Permissions are the API permissions the suite's specs use beyond
	// what every suite of the harness uses (Permissions, in the
	// declaration): the binary declares them, and the runner grants them
	// in the ClusterRole of a run against an existing cluster.
	Permissions []rbac.Rule
	// Precondition, when set, is asked before each spec the oracle does
	// not skip, before the spec's namespace exists: it stops the spec with
	// t.Skip (e.g. a cluster configured unlike the rules assume) or
	// t.SetUpMissing (what the question needs is not there), or returns
	// and the spec runs.
	Precondition func(ctx context.Context, t *Scenario)
	// SetUp, when set, runs once per process before the first spec of the
	// family that runs (never in a dry run or without a cluster); an error
	// fails every spec of the family. The cleanup it returns runs after the
	// suite.
	SetUp func(ctx context.Context) (cleanup func(context.Context) error, err error)
}

var (
	suitesMu sync.Mutex
	suites   = map[string]*family{}
)

type family struct {
	Suite
	once    sync.Once
	err     error
	cleanup func(context.Context) error
}

// Register adds a suite to the binary. Call it from an init function.
func Register(s Suite) {
	suitesMu.Lock()
	defer suitesMu.Unlock()
	if _, dup := suites[s.Family]; dup {
		panic("suite " + s.Family + " registered twice")
	}
	suites[s.Family] = &family{Suite: s}
}

// Families lists the registered suites' families.
func Families() []string {
	suitesMu.Lock()
	defer suitesMu.Unlock()
	var out []string
	for f := range suites {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// Declarations are the registered suites' declarations, by family.
func Declarations() []senv.Suite {
	var out []senv.Suite
	for _, name := range Families() {
		f := registered(name)
		out = append(out, senv.Suite{Family: f.Family, Fixtures: f.Fixtures,
			Permissions: rbac.Merge(Permissions, f.Permissions)})
	}
	return out
}

func suiteOf(name string) *family {
	if f := registered(name); f != nil {
		return f
	}
	panic("no suite " + name + " registered")
}

// registered is the suite of a family, nil if none is registered.
func registered(name string) *family {
	suitesMu.Lock()
	defer suitesMu.Unlock()
	return suites[name]
}

// Specs comes first in every top-level Describe of a suite: it reports each
// finished spec's progress line and, before the family's first spec, runs
// the suite's SetUp. A top-level ReportAfterEach would not survive the
// preview of the spec tree that framework.AfterReadingAllFlags makes
// (Ginkgo runs the suite from a copy that holds only containers and suite
// nodes), hence one per Describe.
func Specs(name string) {
	f := suiteOf(name)
	ReportAfterEach(reportProgress)
	BeforeEach(func(ctx SpecContext) {
		if !Connected() || f.SetUp == nil {
			return
		}
		f.once.Do(func() {
			By("setting up the " + f.Family + " suite")
			f.cleanup, f.err = f.SetUp(ctx)
		})
		Expect(f.err).NotTo(HaveOccurred(), "setting up the %s suite", f.Family)
	})
}

// RunE2E is the body of the e2e binary's one Go test function: it discovers
// the cluster (or reads a made-up one from SKEWPROOF_NODES), previews the
// spec tree and runs the specs of every registered suite that the Ginkgo
// filters select.
func RunE2E(t *testing.T) {
	if path := os.Getenv(senv.Declare); path != "" {
		if err := senv.WriteSuites(path, Declarations()); err != nil {
			t.Fatalf("declaring the suites: %v", err)
		}
		t.Skipf("%s is set: the suites are declared in %s, no spec runs", senv.Declare, path)
	}
	var err error
	switch plan, kubeconfig := os.Getenv(senv.PlanFile), os.Getenv(senv.Kubeconfig); {
	case plan != "":
		var p senv.Plan
		if p, err = senv.ReadPlan(plan); err == nil {
			err = usePlan(p, p.Kubeconfig)
		}
	case os.Getenv(senv.Nodes) != "":
		err = fakeEnv(os.Getenv(senv.APIServer), os.Getenv(senv.Nodes))
	case kubeconfig != "":
		var p senv.Plan
		if p, err = planByHand(context.Background(), kubeconfig); err == nil {
			err = usePlan(p, kubeconfig)
		}
	default:
		t.Skipf("neither %s nor %s is set: the suites need a cluster (see 'skewproof run')", senv.PlanFile, senv.Kubeconfig)
	}
	if err != nil {
		t.Fatalf("the cluster under test: %v", err)
	}
	// Builds the spec tree (framework.AfterReadingAllFlags previews it to
	// validate the spec texts), so the workers must be known by now.
	framework.AfterReadingAllFlags(&framework.TestContext)
	RegisterFailHandler(Fail)
	RunSpecs(t, "skewproof")
}

// The suite-level nodes of the binary: the cleanups of the suites that were
// set up and the namespaces this process left behind, then the
// runner-facing JUnit report (one test suite per family).
var _ = SynchronizedAfterSuite(func() {}, func(ctx SpecContext) {
	fmt.Fprintln(os.Stdout, senv.SpecsDoneLine)
	if !Connected() {
		return
	}
	var errs []string
	for _, name := range Families() {
		f := suiteOf(name)
		if f.cleanup != nil && !Env.Keep {
			if err := f.cleanup(ctx); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", name, err))
			}
		}
	}
	DeleteLeftovers(ctx)
	Expect(errs).To(BeEmpty(), "cleaning up after the suites")
}, NodeTimeout(4*time.Minute))

var _ = ReportAfterSuite("skewproof JUnit", func(r Report) {
	path := os.Getenv(senv.JUnit)
	if path == "" || r.SuiteConfig.DryRun {
		return
	}
	Expect(reports.WriteJUnitFile(path, SplitByFamily(r, Env.Cluster)...)).To(Succeed())
})

// SplitByFamily turns a Ginkgo report into one reports.Suite per catalogue
// family that has results, named after it.
func SplitByFamily(r Report, cluster string) []reports.Suite {
	all := reports.FromGinkgo(r, "", cluster)
	by := map[string]*reports.Suite{}
	var order []string
	for _, res := range all.Results {
		f := skew.Family(res.ID)
		if by[f] == nil {
			by[f] = &reports.Suite{Name: f, Cluster: cluster, Timestamp: all.Timestamp}
			order = append(order, f)
		}
		by[f].Results = append(by[f].Results, res)
	}
	sort.Strings(order)
	var out []reports.Suite
	for _, f := range order {
		out = append(out, *by[f])
	}
	return out
}
