package seccomp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/test/e2e/framework"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"
	admissionapi "k8s.io/pod-security-admission/api"

	"github.com/skewproof/skewproof/clusters"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// runID marks the namespaces of this run, so leftovers can be found (the
// runner passes its own in SKEWPROOF_RUN_ID).
var runID = func() string {
	if id := os.Getenv("SKEWPROOF_RUN_ID"); id != "" {
		return id
	}
	return rand.String(6)
}()

// processID marks the namespaces of this process: several suite processes
// of one run (same runID) must not delete each other's namespaces.
var processID = rand.String(8)

const (
	suiteLabel   = "skewproof.io/suite"
	runLabel     = "skewproof.io/run"
	processLabel = "skewproof.io/process"
	// podTimeout bounds the wait for a container to run or to show its failure.
	podTimeout = 2 * time.Minute
)

// warnings collects the API server's warnings of one spec's requests.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// take returns and forgets the warnings collected so far.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// scenario is one spec's context: the oracle's expectation, the framework
// and its namespace, a client that collects warnings, the node for kubelet
// rules.
type scenario struct {
	ID     string
	Node   *node
	Exp    skew.Expectation
	F      *framework.Framework
	NS     string
	Client kubernetes.Interface
	warn   *warnings
	result reports.Result
}

// scope is what the specs of one top-level Describe share: the framework
// instance, which gives every spec its clients and a namespace of its own,
// and the scenario of the running spec (the specs of one process run one
// at a time).
type scope struct {
	f *framework.Framework
	t *scenario
}

// declaring is the scope of the Describe being built; apiRule and
// kubeletRule add their specs to it.
var declaring *scope

// setUp comes first in every top-level Describe. It reports each finished
// spec's progress line (reportProgress). Its BeforeEach runs before
// the framework's: the oracle's expectation is recorded, and a spec the
// oracle skips is skipped, before the framework creates the namespace.
// The namespaces are privileged: specs run Unconfined containers and pin
// pods to nodes.
func setUp() {
	s := &scope{}
	ReportAfterEach(reportProgress)
	BeforeEach(func() { s.t = prepare(CurrentSpecReport()) })
	s.f = framework.NewFramework("skewproof-seccomp", framework.Options{ClientQPS: 50, ClientBurst: 100}, nil)
	s.f.NamespacePodSecurityLevel = admissionapi.LevelPrivileged
	declaring = s
}

// prepare asks the oracle about the spec (its catalogue id and node are
// among its labels), records the expectation and skips the spec when the
// oracle says so.
func prepare(r SpecReport) *scenario {
	var id string
	var nd *node
	for _, l := range r.Labels() {
		if v, ok := ruleIDs[l]; ok {
			id = v
		}
		if name, ok := strings.CutPrefix(l, "node:"); ok {
			for i := range env.Workers {
				if env.Workers[i].Name == name {
					nd = &env.Workers[i]
				}
			}
			Expect(nd).NotTo(BeNil(), "spec %q: no worker %s", r.LeafNodeText, name)
		}
	}
	Expect(id).NotTo(BeEmpty(), "spec %q has no catalogue id label", r.LeafNodeText)
	kubelet, host := env.Workers[0].Kubelet, env.Workers[0].Host
	if nd != nil {
		kubelet, host = nd.Kubelet, nd.Host
	}
	e, err := skew.Expect(id, env.APIServer, kubelet, host)
	Expect(err).NotTo(HaveOccurred(), "asking the oracle")
	t := &scenario{ID: id, Node: nd, Exp: e, warn: &warnings{}}
	t.result = reports.Result{ID: id, APIServer: env.APIServer.String(), Expected: skew.Describe(e.Expected),
		KEP: skew.Describe(e.KEPPlanned)}
	if nd != nil {
		t.result.Node, t.result.Kubelet = nd.Name, nd.Kubelet.String()
	}
	t.record()
	skip := e.Skip
	if skip == "" && e.Expected.NotApplicable != "" {
		skip = e.Expected.NotApplicable
	}
	if skip != "" {
		t.result.Verdict, t.result.Reason = reports.Skip, skip
		t.record()
		Skip(skip)
	}
	return t
}

// run runs a spec's body in the namespace the framework created for it,
// with a client that collects the API server's warnings.
func (s *scope) run(ctx context.Context, body func(context.Context, *scenario)) {
	t := s.t
	t.F, t.NS = s.f, s.f.Namespace.Name
	cfg := s.f.ClientConfig()
	cfg.WarningHandler = t.warn
	var err error
	t.Client, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	body(ctx, t)
}

func (t *scenario) record() {
	b, _ := json.Marshal(t.result)
	AddReportEntry(reports.EntryName, string(b), ReportEntryVisibilityNever)
}

// createTestingNS is the framework's namespace creation with the labels of
// this run and process added.
func createTestingNS(ctx context.Context, baseName string, c kubernetes.Interface, labels map[string]string) (*corev1.Namespace, error) {
	if labels == nil {
		labels = map[string]string{}
	}
	labels[suiteLabel], labels[runLabel], labels[processLabel] = "seccomp", runID, processID
	return framework.CreateTestingNS(ctx, baseName, c, labels)
}

// pods is the pod client of the spec's namespace (reads; writes whose
// warnings are observed go through t.Client).
func (t *scenario) pods() *e2epod.PodClient { return e2epod.NewPodClient(t.F) }

// deleteLeftovers removes what this process created and did not remove
// (a spec interrupted half-way); never another process's namespaces.
func deleteLeftovers(ctx context.Context) {
	nl, err := env.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: processLabel + "=" + processID})
	if err == nil {
		for _, ns := range nl.Items {
			_ = env.Client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		}
	}
	if createdRuntimeClass {
		_ = env.Client.NodeV1().RuntimeClasses().Delete(ctx, clusters.NoSeccompHandler, metav1.DeleteOptions{})
	}
}

var createdRuntimeClass bool

// ensureRuntimeClass creates the RuntimeClass of the node images' runtime
// handler that drops seccomp (failure row 1).
func ensureRuntimeClass(ctx context.Context) error {
	_, err := env.Client.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: clusters.NoSeccompHandler, Labels: map[string]string{suiteLabel: "seccomp", runLabel: runID}},
		Handler:    clusters.NoSeccompHandler,
	}, metav1.CreateOptions{})
	switch {
	case err == nil:
		createdRuntimeClass = true
	case apierrors.IsAlreadyExists(err):
	default:
		return fmt.Errorf("creating RuntimeClass %s: %w", clusters.NoSeccompHandler, err)
	}
	return nil
}

// sub is one sub-case of a scenario: what was observed and, for sub-cases
// other than the canonical one, which part of the oracle's observation
// applies to it.
type sub struct {
	Name string
	Obs  observe.Observation
	// Want derives the sub-case's expectation from the oracle's; nil means
	// the whole observation (with MessageContains split per sub-case).
	Want func(skew.Observation) skew.Observation
	// Must lists what the sub-case must show regardless of version (facts of
	// the fixture itself, e.g. "the deny-mkdir profile makes mkdir fail");
	// each entry is a failed check.
	Must []string
}

// generic keeps the parts of an observation that hold for every sub-case:
// admission and absent fields and annotations.
func generic(o skew.Observation) skew.Observation {
	return skew.Observation{Summary: o.Summary, NotApplicable: o.NotApplicable, Admission: o.Admission,
		MessageContains: o.MessageContains, AbsentFields: o.AbsentFields, AbsentAnnotations: o.AbsentAnnotations}
}

// admissionOnly keeps the admission and the rejection messages.
func admissionOnly(o skew.Observation) skew.Observation {
	return skew.Observation{Summary: o.Summary, NotApplicable: o.NotApplicable, Admission: o.Admission, MessageContains: o.MessageContains}
}

func (s sub) want(o skew.Observation, i, n int) skew.Observation {
	if len(o.MessageContains) == n && n > 1 {
		o.MessageContains = []string{o.MessageContains[i]}
	}
	if s.Want != nil {
		return s.Want(o)
	}
	return o
}

// judge compares the sub-cases with the oracle, records the verdict and
// fails the spec when the verdict is fail.
func (t *scenario) judge(subs ...sub) {
	var kepMis, upMis, must, observed, outcomes []string
	for i, s := range subs {
		for _, m := range observe.Match(s.want(t.Exp.KEPPlanned, i, len(subs)), s.Obs) {
			kepMis = append(kepMis, s.Name+": "+m)
		}
		for _, m := range observe.Match(s.want(t.Exp.Expected, i, len(subs)), s.Obs) {
			upMis = append(upMis, s.Name+": "+m)
		}
		for _, m := range s.Must {
			must = append(must, s.Name+": "+m)
		}
		observed = append(observed, s.Name+": "+s.Obs.Summary())
		if s.Obs.Container != nil {
			outcomes = append(outcomes, s.Name+": "+s.Obs.Container.String())
		}
	}
	v := reports.Verdict(t.Exp.Verdict(len(kepMis) == 0 && len(must) == 0, len(upMis) == 0 && len(must) == 0))
	t.result.Verdict = v
	t.result.Observed = strings.Join(observed, " | ")
	t.result.Outcome = strings.Join(outcomes, "; ")
	switch v {
	case reports.Pass:
		t.result.Reason = "matches the KEP: " + t.Exp.Reason
	case reports.Deviation:
		t.result.Reason = "known upstream deviation: " + t.Exp.Reason
		if len(kepMis) > 0 {
			t.result.Outcome = strings.TrimPrefix(t.result.Outcome+"; differs from the KEP plan: "+strings.Join(kepMis, "; "), "; ")
		}
	case reports.Fail:
		all := append(must, upMis...)
		t.result.Reason = t.Exp.Reason
		t.result.Failure = fmt.Sprintf("%s on %s: observation matches neither the KEP nor upstream v%s\nexpected: %s\nmismatches:\n  %s\nobserved: %s",
			t.ID, where(t.Node), t.Exp.Version, skew.Describe(t.Exp.Expected), strings.Join(all, "\n  "), t.result.Observed)
	}
	t.record()
	if v == reports.Fail {
		Fail(t.result.Failure)
	}
}

func where(nd *node) string {
	if nd == nil {
		return "the API server"
	}
	return fmt.Sprintf("node %s (kubelet v%s)", nd.Name, nd.Kubelet)
}

// --- acting and observing ---

// create sends a pod and observes the answer and the stored object.
func (t *scenario) create(ctx context.Context, pod *corev1.Pod) observe.Observation {
	t.warn.take()
	p, err := t.Client.CoreV1().Pods(t.NS).Create(ctx, pod, metav1.CreateOptions{})
	return t.observeWrite(ctx, p, err)
}

func (t *scenario) observeWrite(ctx context.Context, p *corev1.Pod, err error) observe.Observation {
	o := observe.Observation{Warnings: t.warn.take()}
	if err != nil {
		Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err)).To(BeTrue(),
			"the API server failed for another reason than validation: %v", err)
		o.Admission, o.Errors = skew.Rejected, []string{err.Error()}
		return o
	}
	o.Admission = skew.Accepted
	stored, err := t.pods().Get(ctx, p.Name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred(), "reading the stored pod back")
	o.Object, err = observe.ToUnstructured(stored)
	Expect(err).NotTo(HaveOccurred())
	return o
}

// mustCreate creates a pod that the scenario needs to act on.
func (t *scenario) mustCreate(ctx context.Context, pod *corev1.Pod) observe.Observation {
	o := t.create(ctx, pod)
	Expect(o.Admission).To(Equal(skew.Accepted), "creating pod %s: %v", pod.Name, o.Errors)
	return o
}

func podStatus(p *corev1.Pod, container string) (corev1.ContainerStatus, bool) {
	for _, l := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.EphemeralContainerStatuses} {
		for _, s := range l {
			if s.Name == container {
				return s, true
			}
		}
	}
	return corev1.ContainerStatus{}, false
}

func isEphemeral(p *corev1.Pod, container string) bool {
	for _, c := range p.Spec.EphemeralContainers {
		if c.Name == container {
			return true
		}
	}
	return false
}

// startupReasons are waiting reasons of a container that is still starting.
var startupReasons = map[string]bool{"": true, "ContainerCreating": true, "PodInitializing": true}

// observeContainer waits until the container runs or shows why it does not.
// With retries, a failing container is also watched until the kubelet has
// retried it (restart count or repeated failure events). A running
// container's Seccomp mode is read from /proc/1/status.
func (t *scenario) observeContainer(ctx context.Context, pod, container string, retries bool) *observe.Container {
	var last corev1.ContainerStatus
	var got *observe.Container
	var lastErr error
	var exited *observe.Container
	err := wait.PollUntilContextTimeout(ctx, time.Second, podTimeout, true, func(ctx context.Context) (bool, error) {
		p, err := t.pods().Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		s, ok := podStatus(p, container)
		if !ok {
			return false, nil
		}
		last = s
		switch {
		case s.State.Running != nil:
			// A container whose process cannot start may show Running for a
			// moment: it counts as running once an exec into it works.
			mode, err := t.seccompMode(ctx, pod, container)
			if err != nil {
				lastErr = err
				return false, nil
			}
			got = &observe.Container{State: skew.Running, SeccompMode: mode}
			return true, nil
		case s.State.Terminated != nil && isEphemeral(p, container):
			// Ephemeral containers are never restarted: this is final.
			term := s.State.Terminated
			got = &observe.Container{State: skew.Terminated, Reason: term.Reason,
				Message: strings.TrimSpace(fmt.Sprintf("exit code %d %s", term.ExitCode, term.Message))}
			return true, nil
		case s.State.Terminated != nil && s.RestartCount >= 1:
			// Exited again after a restart. Once the kubelet has also
			// reported backing off (a BackOff event), the container is
			// known to fail and be retried with back-off: from kubelet
			// v1.35 the status stays Terminated for the whole back-off
			// (skew/rules_seccomp.go, seccompRow2). Until then keep
			// watching: a waiting reason may follow.
			term := s.State.Terminated
			c := &observe.Container{State: skew.Terminated, Reason: term.Reason,
				Message: strings.TrimSpace(fmt.Sprintf("exit code %d %s", term.ExitCode, term.Message))}
			if n := t.eventCount(ctx, pod, "BackOff"); n >= 1 {
				c.Behaviour = fmt.Sprintf("retried: restartCount %d, %d BackOff events", s.RestartCount, n)
				got = c
				return true, nil
			}
			c.Behaviour = fmt.Sprintf("restartCount %d, no waiting state and no BackOff event seen within %s", s.RestartCount, podTimeout)
			exited = c
		case s.State.Waiting != nil && !startupReasons[s.State.Waiting.Reason]:
			c := &observe.Container{State: skew.Waiting, Reason: s.State.Waiting.Reason, Message: s.State.Waiting.Message}
			if !retries {
				got = c
				return true, nil
			}
			tries := t.eventCount(ctx, pod, "Failed", "BackOff")
			if s.RestartCount >= 1 || tries >= 2 {
				c.Behaviour = fmt.Sprintf("retried: restartCount %d, %d failure events", s.RestartCount, tries)
				got = c
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil && exited != nil && ctx.Err() == nil {
		// The container only ever showed as exited between restarts: report
		// that as the observation (it matches no expected outcome).
		got, err = exited, nil
	}
	Expect(err).NotTo(HaveOccurred(), "waiting for container %s of pod %s to run or fail; last status %+v; last exec error: %v", container, pod, last, lastErr)
	got.Message = strings.TrimSpace(got.Message + "\n" + t.eventMessages(ctx, pod))
	return got
}

// eventCount counts the events of a pod with one of the given reasons
// (e.g. the kubelet's Failed and BackOff), with their repetitions.
func (t *scenario) eventCount(ctx context.Context, pod string, reasons ...string) int {
	el, err := t.F.ClientSet.CoreV1().Events(t.NS).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range el.Items {
		if slices.Contains(reasons, e.Reason) {
			c := int(e.Count)
			if c == 0 {
				c = 1
			}
			if e.Series != nil && int(e.Series.Count) > c {
				c = int(e.Series.Count)
			}
			n += c
		}
	}
	return n
}

func (t *scenario) eventMessages(ctx context.Context, pod string) string {
	el, err := t.F.ClientSet.CoreV1().Events(t.NS).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		return ""
	}
	var out []string
	for _, e := range el.Items {
		if e.Type == corev1.EventTypeWarning {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return strings.Join(out, "\n")
}

// exec runs a command in a container and returns its output and exit error.
func (t *scenario) exec(ctx context.Context, pod, container string, cmd ...string) (string, string, error) {
	return e2epod.Exec(t.F.TContext(ctx), e2epod.ExecOptions{Command: cmd, Namespace: t.NS, PodName: pod, ContainerName: container,
		CaptureStdout: true, CaptureStderr: true, PreserveWhitespace: true, Quiet: true})
}

var seccompLine = regexp.MustCompile(`(?m)^Seccomp:\s*(\d+)`)

// seccompMode reads "Seccomp:" of the container's PID 1.
func (t *scenario) seccompMode(ctx context.Context, pod, container string) (*int, error) {
	out, stderr, err := t.exec(ctx, pod, container, "cat", "/proc/1/status")
	if err != nil {
		return nil, fmt.Errorf("reading /proc/1/status in %s/%s: %v %s", pod, container, err, stderr)
	}
	m := seccompLine.FindStringSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("no Seccomp line in /proc/1/status of %s/%s", pod, container)
	}
	v, _ := strconv.Atoi(m[1])
	return &v, nil
}

// try runs a shell command in the container and describes the result.
func (t *scenario) try(ctx context.Context, pod, container, label, shell string) (ok bool, desc string) {
	out, stderr, err := t.exec(ctx, pod, container, "sh", "-c", shell)
	if err == nil {
		return true, label + ": ok"
	}
	msg := strings.TrimSpace(stderr + " " + out)
	return false, fmt.Sprintf("%s: %s", label, msg)
}

func (t *scenario) nodeName() string {
	if t.Node == nil {
		return ""
	}
	return t.Node.Name
}
