package harness

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"

	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// PodTimeout bounds the wait for a container to run or to show its failure;
// slowPodTimeout replaces it in a process whose nodes include an AppArmor
// node on User-Mode Linux.
var PodTimeout = 2 * time.Minute

const slowPodTimeout = 8 * time.Minute

// NodeWait is how long to wait for something the spec's node does (its
// agent writing a file, its kubelet removing a pod): d, or 4×d on an
// AppArmor node (User-Mode Linux), as PodTimeout.
func (t *Scenario) NodeWait(d time.Duration) time.Duration {
	if t.Node != nil && t.Node.AppArmorKernel() {
		return 4 * d
	}
	return d
}

// EveryNodeWait is how long to wait for something every node of the
// cluster does (the agent ready on each, a profile installed on each): d,
// or 4×d when the cluster has AppArmor nodes (User-Mode Linux, one slow
// CPU each, a minute or more to start and sync the agent while the suites
// run; their kernels share the host's CPUs with the kind nodes).
func EveryNodeWait(d time.Duration) time.Duration {
	for _, n := range Env.Nodes {
		if n.AppArmorKernel() {
			return 4 * d
		}
	}
	return d
}

// PodStatus returns the status of a container, init container (sidecars
// included) or ephemeral container.
func PodStatus(p *corev1.Pod, container string) (corev1.ContainerStatus, bool) {
	for _, l := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses, p.Status.EphemeralContainerStatuses} {
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

// blockedReason is the waiting reason the kubelet gives every container of
// a pod its soft admission refuses (pkg/kubelet/kubelet.go, SyncPod).
const blockedReason = "Blocked"

// ObserveContainer waits until the container runs or shows why it does not.
// With retries, a failing container is also watched until the kubelet has
// retried it (restart count or repeated failure events). A running
// container's Seccomp mode and AppArmor label are read from its PID 1.
// A pod the kubelet rejects (phase Failed with a reason) or blocks (Pending,
// containers waiting "Blocked") is reported as such, and so is a pod whose
// RuntimeClass names a handler the node's runtime lacks (SandboxFailed).
func (t *Scenario) ObserveContainer(ctx context.Context, pod, container string, retries bool) *observe.Container {
	var last corev1.ContainerStatus
	var got *observe.Container
	var lastErr error
	var exited *observe.Container
	err := t.untilPodChanges(ctx, pod, time.Second, PodTimeout, func(ctx context.Context) (bool, error) {
		p, err := t.Pods().Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		if p.Status.Phase == corev1.PodFailed && p.Status.Reason != "" {
			got = &observe.Container{State: skew.RejectedByKubelet, Reason: p.Status.Reason, Message: p.Status.Message}
			return true, nil
		}
		s, ok := PodStatus(p, container)
		if !ok {
			return false, nil
		}
		last = s
		if c := t.sandboxFailure(ctx, p, s); c != nil {
			got = c
			return true, nil
		}
		switch {
		case s.State.Waiting != nil && s.State.Waiting.Reason == blockedReason:
			got = &observe.Container{State: skew.Blocked, Reason: p.Status.Reason, Message: p.Status.Message}
			return true, nil
		case s.State.Running != nil:
			// A container whose process cannot start may show Running for a
			// moment: it counts as running once an exec into it works.
			probes := t.candidateProbes()
			mode, label, runs, err := t.readPID1(ctx, pod, container, probes)
			if err != nil {
				lastErr = err
				return false, nil
			}
			got = &observe.Container{State: skew.Running, SeccompMode: mode, AppArmorProfile: label, Pod: pod, Name: container}
			t.keepProbed(got, runs)
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
			if n := t.EventCount(ctx, pod, "BackOff"); n >= 1 {
				c.Behaviour = fmt.Sprintf("retried: restartCount %d, %d BackOff events", s.RestartCount, n)
				got = c
				return true, nil
			}
			c.Behaviour = fmt.Sprintf("restartCount %d, no waiting state and no BackOff event seen within %s", s.RestartCount, PodTimeout)
			exited = c
		case s.State.Waiting != nil && !startupReasons[s.State.Waiting.Reason]:
			c := &observe.Container{State: skew.Waiting, Reason: s.State.Waiting.Reason, Message: s.State.Waiting.Message}
			if !retries {
				got = c
				return true, nil
			}
			tries := t.EventCount(ctx, pod, "Failed", "BackOff")
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
	got.Message = strings.TrimSpace(got.Message + "\n" + t.EventMessages(ctx, pod))
	return got
}

// EventCount counts the events of a pod with one of the given reasons
// (e.g. the kubelet's Failed and BackOff), with their repetitions.
func (t *Scenario) EventCount(ctx context.Context, pod string, reasons ...string) int {
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

// EventMessages are the pod's warning events, one "Reason: message" a line.
func (t *Scenario) EventMessages(ctx context.Context, pod string) string {
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

// Exec runs a command in a container and returns its output and exit error.
func (t *Scenario) Exec(ctx context.Context, pod, container string, cmd ...string) (string, string, error) {
	return e2epod.Exec(t.F.TContext(ctx), e2epod.ExecOptions{Command: cmd, Namespace: t.NS, PodName: pod, ContainerName: container,
		CaptureStdout: true, CaptureStderr: true, PreserveWhitespace: true, Quiet: true})
}

var seccompLine = regexp.MustCompile(`(?m)^Seccomp:\s*(\d+)`)

// attrMarker separates the two files readPID1 prints.
const attrMarker = "--skewproof-attr-current--"

// readPID1Script prints both files. It must not redirect to any file: in a
// container confined by skewproof-deny-write (deny /** w) the shell cannot
// open even /dev/null for writing, and a failed redirection skips its
// command (with "2>/dev/null" the label read as empty and
// apparmor/kubelet/enforce failed). Without AppArmor the label read fails
// on stderr, which the exec keeps apart.
const readPID1Script = "cat /proc/1/status && echo " + attrMarker + " && { cat /proc/1/attr/current || true; }"

// readPID1 reads, in one exec, the container's PID 1 "Seccomp:" line of
// /proc/1/status (SeccompMode) and /proc/1/attr/current (AppArmorLabel),
// and then tries the probes as TryAll does (their results in runs): on an
// AppArmor node an exec costs one to two seconds, and the effect probes of
// a spec's container would otherwise take one more right after.
func (t *Scenario) readPID1(ctx context.Context, pod, container string, probes []Probe) (mode *int, label string, runs map[Probe]probeRun, err error) {
	out, stderr, err := t.Exec(ctx, pod, container, "sh", "-c", readPID1WithProbes(probes))
	if err != nil {
		return nil, "", nil, fmt.Errorf("reading /proc/1/status in %s/%s: %v %s", pod, container, err, stderr)
	}
	return parsePID1WithProbes(probes, out, stderr, pod, container)
}

// readPID1WithProbes is readPID1's script: readPID1Script (its failure is
// the script's), an empty line (so that a label without a newline ends
// before the first probe's marker), then the probes.
func readPID1WithProbes(probes []Probe) string {
	if len(probes) == 0 {
		return readPID1Script
	}
	return "{ " + readPID1Script + "; } || exit\necho\n" + tryAllScript(probes)
}

// parsePID1WithProbes splits the output of readPID1WithProbes: what
// readPID1Script printed, then the probes' sections (parseTryAll).
func parsePID1WithProbes(probes []Probe, out, stderr, pod, container string) (*int, string, map[Probe]probeRun, error) {
	pid1 := out
	var runs map[Probe]probeRun
	if len(probes) > 0 {
		first := fmt.Sprintf("\n%s0--\n", tryMarker)
		i := strings.Index(out, first)
		if i < 0 {
			return nil, "", nil, fmt.Errorf("reading /proc/1/status in %s/%s: no probe after it in %q", pod, container, out)
		}
		pid1 = out[:i+1]
		ok, desc := parseTryAll(probes, out[i+1:], stderr, nil)
		runs = map[Probe]probeRun{}
		for k, p := range probes {
			runs[p] = probeRun{ok[k], desc[k]}
		}
	}
	mode, label, err := parsePID1(pid1, pod, container)
	return mode, label, runs, err
}

// probeRun is what a probe did in a container: Try's result.
type probeRun struct {
	ok   bool
	desc string
}

// keepProbed keeps what the probes run with the read of c's PID 1 did, for
// tryIn.
func (t *Scenario) keepProbed(c *observe.Container, runs map[Probe]probeRun) {
	if len(runs) == 0 {
		return
	}
	t.probedMu.Lock()
	defer t.probedMu.Unlock()
	if t.probed == nil {
		t.probed = map[*observe.Container]map[Probe]probeRun{}
	}
	t.probed[c] = runs
}

// tryIn tries the probes in the observed container c as TryAll does, and
// takes their results from the read of its PID 1 when every one of them
// ran there (keepProbed): the same container, seen running, a moment
// earlier.
func (t *Scenario) tryIn(ctx context.Context, c *observe.Container, probes ...Probe) (ok []bool, desc []string) {
	t.probedMu.Lock()
	runs := t.probed[c]
	t.probedMu.Unlock()
	for _, p := range probes {
		r, found := runs[p]
		if !found {
			return t.TryAll(ctx, c.Pod, c.Name, probes...)
		}
		ok, desc = append(ok, r.ok), append(desc, r.desc)
	}
	return ok, desc
}

// parsePID1 splits readPID1's output into the Seccomp mode and the
// AppArmor label.
func parsePID1(out, pod, container string) (*int, string, error) {
	status, attr, ok := strings.Cut(out, attrMarker+"\n")
	if !ok {
		return nil, "", fmt.Errorf("reading /proc/1/status and /proc/1/attr/current in %s/%s: no end of status in %q", pod, container, out)
	}
	mode, err := seccompMode(status, pod, container)
	if err != nil {
		return nil, "", err
	}
	return mode, appArmorLabel(attr), nil
}

// SeccompMode reads "Seccomp:" of the container's PID 1.
func (t *Scenario) SeccompMode(ctx context.Context, pod, container string) (*int, error) {
	out, stderr, err := t.Exec(ctx, pod, container, "cat", "/proc/1/status")
	if err != nil {
		return nil, fmt.Errorf("reading /proc/1/status in %s/%s: %v %s", pod, container, err, stderr)
	}
	return seccompMode(out, pod, container)
}

func seccompMode(status, pod, container string) (*int, error) {
	m := seccompLine.FindStringSubmatch(status)
	if m == nil {
		return nil, fmt.Errorf("no Seccomp line in /proc/1/status of %s/%s", pod, container)
	}
	v, _ := strconv.Atoi(m[1])
	return &v, nil
}

// AppArmorLabel reads /proc/1/attr/current of the container: the AppArmor
// profile and mode its PID 1 runs under (e.g. "skewproof-deny-write
// (enforce)", "unconfined"). A kernel without an LSM that answers it
// (no AppArmor) refuses the read: that gives "".
func (t *Scenario) AppArmorLabel(ctx context.Context, pod, container string) string {
	out, _, err := t.Exec(ctx, pod, container, "cat", "/proc/1/attr/current")
	if err != nil {
		return ""
	}
	return appArmorLabel(out)
}

func appArmorLabel(attr string) string {
	return strings.TrimSpace(strings.TrimRight(attr, "\x00"))
}

// Try runs a shell command in the container and describes the result.
func (t *Scenario) Try(ctx context.Context, pod, container, label, shell string) (ok bool, desc string) {
	out, stderr, err := t.Exec(ctx, pod, container, "sh", "-c", shell)
	return err == nil, described(label, err == nil, stderr, out)
}

// described is what Try and TryAll say of a probe: "LABEL: ok", or what it
// printed, standard error first.
func described(label string, ok bool, stderr, out string) string {
	if ok {
		return label + ": ok"
	}
	return fmt.Sprintf("%s: %s", label, strings.TrimSpace(stderr+" "+out))
}

// TryAll tries each probe as Try does, one after the other in a single
// exec: each in a shell of its own (a failure does not stop the next), its
// standard output and error kept apart, its exit status its result. The
// results are in the order of probes, described as Try describes them.
// One exec instead of one each: on an AppArmor node an exec costs one to
// two seconds. Nothing is redirected to a file (a container under
// skewproof-deny-write cannot open even /dev/null for writing): the markers
// go to the exec's own streams.
func (t *Scenario) TryAll(ctx context.Context, pod, container string, probes ...Probe) (ok []bool, desc []string) {
	out, stderr, err := t.Exec(ctx, pod, container, "sh", "-c", tryAllScript(probes))
	return parseTryAll(probes, out, stderr, err)
}

// tryMarker begins the lines TryAll's script prints around each probe.
const tryMarker = "--skewproof-probe-"

// tryAllScript runs each probe in its own sh -c, printing before it a
// marker on both streams and after it, on standard output, its exit status.
func tryAllScript(probes []Probe) string {
	var b strings.Builder
	for i, p := range probes {
		m := fmt.Sprintf("%s%d--", tryMarker, i)
		fmt.Fprintf(&b, "echo %s; echo %s >&2; sh -c '%s'; echo %s$?\n", m, m, strings.ReplaceAll(p.Shell, "'", `'\''`), m+"rc=")
	}
	return b.String()
}

// parseTryAll splits the script's two streams by probe. A probe without
// its exit status (the exec ended before it) failed, with the exec's error.
func parseTryAll(probes []Probe, out, stderr string, err error) (ok []bool, desc []string) {
	ok, desc = make([]bool, len(probes)), make([]string, len(probes))
	for i, p := range probes {
		m := fmt.Sprintf("%s%d--", tryMarker, i)
		o, e := section(out, m), section(stderr, m)
		o, rc, done := strings.Cut(o, m+"rc=")
		if done {
			rc, _, _ = strings.Cut(rc, "\n")
		}
		ok[i] = done && rc == "0"
		desc[i] = described(p.Label, ok[i], e, o)
		if !done {
			desc[i] = described(p.Label+": not run ("+fmt.Sprint(err)+")", false, e, o)
		}
	}
	return ok, desc
}

// section is what s holds after the line "marker" up to the next probe's
// marker (or the end).
func section(s, marker string) string {
	_, after, found := strings.Cut(s, marker+"\n")
	if !found {
		return ""
	}
	if i := strings.Index(after, tryMarker); i >= 0 && !strings.HasPrefix(after[i:], marker+"rc=") {
		after = after[:i]
	}
	return after
}

// RestartCount is the restart count of the pod's scenario container.
func (t *Scenario) RestartCount(ctx context.Context, pod string) int32 {
	p, err := t.Pods().Get(ctx, pod, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	s, _ := PodStatus(p, names.ContainerName)
	return s.RestartCount
}

// RestartAndObserve kills the scenario container's PID 1 and observes the
// container once the kubelet has restarted it.
func (t *Scenario) RestartAndObserve(ctx context.Context, pod string) *observe.Container {
	restarts := t.RestartCount(ctx, pod)
	_, _, _ = t.Exec(ctx, pod, names.ContainerName, "kill", "1")
	err := t.untilPodChanges(ctx, pod, time.Second, PodTimeout, func(ctx context.Context) (bool, error) {
		p, err := t.Pods().Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		s, _ := PodStatus(p, names.ContainerName)
		return s.RestartCount > restarts && s.State.Running != nil, nil
	})
	Expect(err).NotTo(HaveOccurred(), "waiting for the container to restart after kill 1")
	c := t.ObserveContainer(ctx, pod, names.ContainerName, false)
	c.Behaviour = "restarted"
	return c
}

// untilPodChanges is wait.PollUntilContextTimeout (immediate) that also
// evaluates cond as soon as the pod or one of its events changes (watches
// on both), so that a wait ends when the kubelet reports, not up to an
// interval later. The interval stays the longest gap between two
// evaluations: for what no watch shows (an exec that starts to work), and
// should a watch end or fail.
func (t *Scenario) untilPodChanges(ctx context.Context, pod string, interval, timeout time.Duration, cond wait.ConditionWithContextFunc) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	changed := make(chan struct{}, 1)
	notify := func(w watch.Interface, err error) {
		if err != nil {
			return
		}
		go func() {
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case _, ok := <-w.ResultChan():
					if !ok {
						return
					}
					select {
					case changed <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	notify(t.F.ClientSet.CoreV1().Pods(t.NS).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + pod}))
	notify(t.F.ClientSet.CoreV1().Events(t.NS).Watch(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod}))
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if ok, err := cond(ctx); err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		case <-changed:
			// Changes come in bursts (status and event together): let them
			// settle a little before looking.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
