package harness

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/skewproof/skewproof/internal/nodeaccess"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/skew/release"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// TestStops runs specs through Ginkgo in this process (no cluster) and
// checks the verdict each records where a check could not be made or
// something the scenario needs is missing: never a pass; a failure on a
// cluster skewproof brought up itself (Env.Own) where the missing part is
// its own set-up, a skip with the reason elsewhere.
func TestStops(t *testing.T) {
	// An API server that has no RuntimeClass.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not found"}`))
	}))
	defer srv.Close()
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	kubelet, _ := release.ParseVersion("1.34.4")
	scenario := func() *Scenario {
		return &Scenario{ID: "seccomp/failure/row-1", Node: &Node{Name: "w1", Kubelet: kubelet}, warn: &warnings{},
			Exp: skew.Expectation{Reason: "the rule"}, F: &framework.Framework{ClientSet: client}}
	}
	running := observe.Observation{Admission: skew.Accepted}
	// A User-Mode Linux node and a control plane without docker access.
	unreached := []Node{{Name: "uml", Kubelet: kubelet, Access: nodeaccess.None}, {Name: "cp", Kubelet: kubelet, ControlPlane: true}}

	type want struct {
		state   types.SpecState
		verdict skew.Verdict
		reason  string
	}
	cases := map[string]struct {
		own  bool
		body func(*Scenario)
		want want
	}{
		"judged": {body: func(s *Scenario) { s.Judge(Sub{Name: "c", Obs: running}) },
			want: want{types.SpecStatePassed, skew.Pass, "matches the KEP"}},
		// The SCMP_ACT_LOG case without its kernel log line used to pass
		// with a note.
		"check not made": {body: func(s *Scenario) {
			s.Judge(Sub{Name: "c", Obs: running, Unmade: &Unmade{Reason: "the kernel does not log"}})
		}, want: want{types.SpecStateSkipped, skew.Skip, "a check could not be made: c: the kernel does not log"}},
		"check not made, own cluster": {own: true, body: func(s *Scenario) {
			s.Judge(Sub{Name: "c", Obs: running, Unmade: &Unmade{Reason: "the kernel does not log"}})
		}, want: want{types.SpecStateSkipped, skew.Skip, "the kernel does not log"}},
		"own set-up not made, own cluster": {own: true, body: func(s *Scenario) {
			s.Judge(Sub{Name: "c", Obs: running, Unmade: &Unmade{SetUp: true, Reason: "the reader pod does not run"}})
		}, want: want{types.SpecStateFailed, skew.Fail, "skewproof's own set-up is broken"}},
		"own set-up not made, existing cluster": {body: func(s *Scenario) {
			s.Judge(Sub{Name: "c", Obs: running, Unmade: &Unmade{SetUp: true, Reason: "the reader pod does not run"}})
		}, want: want{types.SpecStateSkipped, skew.Skip, "the reader pod does not run"}},
		"failed check and a check not made": {body: func(s *Scenario) {
			s.Judge(Sub{Name: "c", Obs: running, Must: []string{"mkdir succeeded"}, Unmade: &Unmade{Reason: "the kernel does not log"}})
		}, want: want{types.SpecStateFailed, skew.Fail, "the rule"}},
		// The profiles suite's own stops follow the same rule (they used to
		// call Ginkgo's Skip directly: green on skewproof's own cluster).
		"profiles: no node reached, own cluster": {own: true, body: func(*Scenario) {
			NodeWithAccess("profiles/node-status/partial", unreached)
		}, want: want{types.SpecStateFailed, skew.Fail, "skewproof's own set-up is broken"}},
		"profiles: no node reached, existing cluster": {body: func(*Scenario) {
			NodeWithAccess("profiles/node-status/partial", unreached)
		}, want: want{types.SpecStateSkipped, skew.Skip, NeedsNodeAccess}},
		"profiles: agent image without apparmor_parser, own cluster": {own: true, body: func(*Scenario) {
			MissingSetUp("profiles/agent/apparmor-parser", nil, "the agent image has no apparmor_parser")
		}, want: want{types.SpecStateFailed, skew.Fail, "profiles/agent/apparmor-parser on the API server: the agent image has no apparmor_parser"}},
		"no RuntimeClass, own cluster": {own: true, body: func(s *Scenario) {
			s.RunUnderHandler(context.Background(), "p", "skewproof-noseccomp", false)
		}, want: want{types.SpecStateFailed, skew.Fail, "skewproof's own set-up is broken"}},
		"no RuntimeClass, existing cluster": {body: func(s *Scenario) {
			s.RunUnderHandler(context.Background(), "p", "skewproof-noseccomp", false)
		}, want: want{types.SpecStateSkipped, skew.Skip, "this cluster has no RuntimeClass skewproof-noseccomp"}},
	}

	got := map[string]types.SpecReport{}
	Describe("stops", func() {
		ReportAfterEach(func(r SpecReport) { got[r.LeafNodeText] = r })
		for name, c := range cases {
			It(name, func() {
				defer func(own bool) { Env.Own = own }(Env.Own)
				Env.Own = c.own
				c.body(scenario())
			})
		}
	})
	suite, rep := GinkgoConfiguration()
	suite.FocusStrings, suite.SkipStrings, suite.LabelFilter = nil, nil, ""
	rep.Succinct, rep.SilenceSkips = true, true
	RunSpecs(&ignoreFailures{}, "harness stops", suite, rep)

	for name, c := range cases {
		r, ok := got[name]
		if !ok {
			t.Errorf("%s: did not run", name)
			continue
		}
		res, _ := reports.FromSpec(r)
		if r.State != c.want.state || res.Verdict != c.want.verdict || !strings.Contains(res.Reason+" "+res.Failure, c.want.reason) {
			t.Errorf("%s: state %s, verdict %s, reason %q, failure %q; want %s, %s, holding %q",
				name, r.State, res.Verdict, res.Reason, res.Failure, c.want.state, c.want.verdict, c.want.reason)
		}
	}
}

// ignoreFailures stands in for the testing.T of RunSpecs: the specs above
// fail on purpose, and TestStops judges their reports instead.
type ignoreFailures struct{}

func (ignoreFailures) Fail() {}
