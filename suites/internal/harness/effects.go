package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// A container's Seccomp mode or AppArmor label proves only that some
// profile is in force. Where the oracle's outcome names an Effect
// (skew.ContainerOutcome.Effect), the profile must show by behaviour: Judge
// probes it in the container (ProveEffects) before it compares, for every
// spec alike, and observe.MatchContainer fails an effect not probed or not
// shown. An effect that cannot be probed (no control, no kernel log) is a
// check not made: the spec stops as Unmade, never passes.

// effectProver probes one effect in a running container.
type effectProver func(ctx context.Context, t *Scenario, c *observe.Container) observe.Effect

var effectProvers = map[string]effectProver{
	skew.EffectSeccompRuntimeDefault:     proveSeccompRuntimeDefault,
	skew.EffectSeccompDenyMkdir:          proveSeccompDenyMkdir,
	skew.EffectAppArmorDenyWrite:         proveAppArmorDenyWrite,
	skew.EffectAppArmorComplainDenyWrite: proveAppArmorComplain,
	skew.EffectAppArmorRuntimeDefault:    proveAppArmorRuntimeDefault,
}

// ProveEffects probes, in every running container of the sub-cases, each
// effect the oracle names for it (effectsWanted), once per container and
// effect. Judge calls it; a spec that describes its outcome before it
// judges (DescribeOutcome) calls it first.
func (t *Scenario) ProveEffects(ctx context.Context, subs ...Sub) {
	for i, s := range subs {
		c := s.Obs.Container
		for _, name := range effectsWanted(s, t.Exp, i, len(subs)) {
			if _, done := c.EffectOf(name); done {
				continue
			}
			var e observe.Effect
			switch prove := effectProvers[name]; {
			case c.Pod == "":
				e = observe.Effect{Unmade: "the container's pod is not known to the harness (not observed by ObserveContainer)"}
			case prove == nil:
				e = observe.Effect{Unmade: "the harness has no probe for this effect"}
			default:
				e = prove(ctx, t, c)
			}
			e.Name = name
			c.Effects = append(c.Effects, e)
		}
	}
}

// effectsWanted lists the effects the KEP plan or upstream expects of the
// sub-case's container, from the outcomes whose state, mode and label it
// shows (an outcome it cannot match needs no probe).
func effectsWanted(s Sub, exp skew.Expectation, i, n int) []string {
	c := s.Obs.Container
	if c == nil || c.State != skew.Running {
		return nil
	}
	var out []string
	for _, o := range []skew.Observation{s.want(exp.KEPPlanned, i, n), s.want(exp.Expected, i, n)} {
		if o.NotApplicable != "" {
			continue
		}
		outcomes := o.AnyOf
		if o.Container != nil {
			outcomes = append([]skew.ContainerOutcome{*o.Container}, outcomes...)
		}
		for _, w := range outcomes {
			if w.Effect != "" && len(observe.MatchContainer(observe.WithoutEffect(w), *c)) == 0 && !contains(out, w.Effect) {
				out = append(out, w.Effect)
			}
		}
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// The probes of each effect's prover, by effect: ObserveContainer runs
// those of the effects the scenario's oracle names with its read of the
// container's PID 1 (Scenario.candidateProbes), in the same exec, and the
// provers take their results from there (Scenario.tryIn).
var (
	denyMkdirProbes = []Probe{{"mkdir", "mkdir /tmp/skewproof-effect-mkdir"},
		{"write+read+list", "echo x > /tmp/skewproof-effect && cat /tmp/skewproof-effect >/dev/null && ls / >/dev/null"}}
	denyWriteProbes              = []Probe{{"write", "echo x > /tmp/skewproof-effect"}, {"read", "head -n 1 /etc/passwd"}}
	appArmorRuntimeDefaultProbes = []Probe{{ProcWrite, ProcWriteProbe}, {"write /tmp", "echo x > /tmp/skewproof-effect"}}
	effectProbes                 = map[string][]Probe{
		skew.EffectSeccompRuntimeDefault:  enforceProbes,
		skew.EffectSeccompDenyMkdir:       denyMkdirProbes,
		skew.EffectAppArmorDenyWrite:      denyWriteProbes,
		skew.EffectAppArmorRuntimeDefault: appArmorRuntimeDefaultProbes,
	}
)

// candidateProbes are the probes of every effect the scenario's oracle
// names, in any outcome or case of the KEP's plan or of upstream's
// behaviour, each once.
func (t *Scenario) candidateProbes() []Probe {
	var out []Probe
	for _, o := range []skew.Observation{t.Exp.KEPPlanned, t.Exp.Expected} {
		outcomes := append(slices.Clone(o.AnyOf), o.Cases...)
		if o.Container != nil {
			outcomes = append(outcomes, *o.Container)
		}
		for _, w := range outcomes {
			for _, p := range effectProbes[w.Effect] {
				if !slices.Contains(out, p) {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// proveSeccompDenyMkdir: under the deny-mkdir profile (errnoRet 1) mkdir
// fails with EPERM, and a write, a read and a directory listing work.
func proveSeccompDenyMkdir(ctx context.Context, t *Scenario, c *observe.Container) observe.Effect {
	ok, desc := t.tryIn(ctx, c, denyMkdirProbes...)
	mkdirOK, mkdir, otherOK, other := ok[0], desc[0], ok[1], desc[1]
	e := observe.Effect{Detail: mkdir + ", " + other}
	e.Shown = !mkdirOK && strings.Contains(mkdir, "Operation not permitted") && otherOK
	return e
}

// proveAppArmorDenyWrite: under skewproof-deny-write (deny /** w) a write
// fails with EACCES and a read works. Nothing is redirected to a file, not
// even /dev/null: the profile denies opening it for writing.
func proveAppArmorDenyWrite(ctx context.Context, t *Scenario, c *observe.Container) observe.Effect {
	ok, desc := t.tryIn(ctx, c, denyWriteProbes...)
	writeOK, write, readOK, read := ok[0], desc[0], ok[1], desc[1]
	e := observe.Effect{Detail: write + ", " + read}
	e.Shown = !writeOK && strings.Contains(write, "Permission denied") && readOK
	return e
}

// proveAppArmorComplain: under skewproof-deny-write in complain mode the
// write the profile does not allow succeeds, and the kernel logs it: an
// audit line apparmor="ALLOWED" for the profile and the writing process,
// read from the node's kernel log. A copy of busybox under a unique name
// makes the line's comm="<name>" this probe's (the shell applet does the
// redirection itself, so no other process writes). Without a readable
// kernel log the check is not made.
func proveAppArmorComplain(ctx context.Context, t *Scenario, c *observe.Container) observe.Effect {
	comm := "busybox" + rand.String(8)
	ok, desc := t.Try(ctx, c.Pod, c.Name, "write",
		fmt.Sprintf("cp /bin/busybox /tmp/%s && /tmp/%s sh -c 'echo x > /tmp/skewproof-complain'", comm, comm))
	e := observe.Effect{Detail: desc}
	if !ok {
		e.Detail += " (complain mode must allow it)"
		return e
	}
	reader := t.StartKernelLogReader(ctx)
	line, unmade := reader.AppArmorLogLine(ctx, t, `apparmor="ALLOWED"`, `profile="`+names.AppArmorLocalhostProfile+`"`, `comm="`+comm+`"`)
	switch {
	case unmade != nil:
		e.Unmade, e.UnmadeSetUp = "no kernel log line could be read: "+unmade.Reason, unmade.SetUp
	case line == "":
		e.Detail += fmt.Sprintf("; no apparmor=\"ALLOWED\" line for comm=%q in the kernel log within %s", comm, KernelLogWait)
	default:
		e.Shown = true
		e.Detail += "; logged by the kernel: " + line
	}
	return e
}

// seccompControls holds, per node, the runtime-default probes tried in an
// Unconfined container (the control): facts of the node's kernel, kept for
// the suite process.
var seccompControls = struct {
	sync.Mutex
	byNode map[string][]probeResult
}{byNode: map[string][]probeResult{}}

// seccompControlPod is the Unconfined pod the harness runs for the control
// where the spec has none of its own.
const seccompControlPod = "seccomp-control"

// SeccompControlFrom tries the runtime-default probes in an Unconfined
// container of the spec and keeps them as the node's control (a spec that
// runs one anyway, seccomp/kubelet/enforce, spares the harness its own
// control pod). It returns what the probes did.
func (t *Scenario) SeccompControlFrom(ctx context.Context, pod, container string) string {
	rs := tryProbes(ctx, t, pod, container, func(r *probeResult, ok bool, desc string) { r.controlOK, r.control = ok, desc })
	seccompControls.Lock()
	seccompControls.byNode[t.NodeName()] = rs
	seccompControls.Unlock()
	var seen []string
	for _, r := range rs {
		seen = append(seen, r.control)
	}
	return strings.Join(seen, ", ")
}

// seccompControl returns the node's control, running the harness's own
// Unconfined pod the first time; unmade says why there is none.
func (t *Scenario) seccompControl(ctx context.Context) ([]probeResult, *observe.Effect) {
	seccompControls.Lock()
	rs, ok := seccompControls.byNode[t.NodeName()]
	seccompControls.Unlock()
	if ok {
		return rs, nil
	}
	if unmade := t.startControlPod(ctx, seccompControlPod, "the Unconfined control pod", func(*observe.Container) bool { return true },
		fx.ContainerSeccomp(&corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined})); unmade != nil {
		return nil, unmade
	}
	t.SeccompControlFrom(ctx, seccompControlPod, names.ContainerName)
	seccompControls.Lock()
	defer seccompControls.Unlock()
	return seccompControls.byNode[t.NodeName()], nil
}

// startControlPod runs a control pod with opts on the scenario's node and
// waits until its container runs and shows what ok asks; unmade says why
// it does not (what names the pod in that reason).
func (t *Scenario) startControlPod(ctx context.Context, name, what string, ok func(*observe.Container) bool, opts ...fx.PodOption) (unmade *observe.Effect) {
	o := t.Create(ctx, fx.Pod(name, append([]fx.PodOption{fx.OnNode(t.NodeName())}, opts...)...))
	if o.Admission != skew.Accepted {
		return &observe.Effect{UnmadeSetUp: true, Unmade: what + " was refused: " + strings.Join(o.Errors, "; ")}
	}
	if c := t.ObserveContainer(ctx, name, names.ContainerName, false); c.State != skew.Running || !ok(c) {
		return &observe.Effect{UnmadeSetUp: true, Unmade: what + " does not run as it must: " + c.String()}
	}
	return nil
}

// proveSeccompRuntimeDefault: every probe whose control works on the node
// fails in the container (the errno is the runtime's: EPERM or ENOSYS,
// skew/rules_runtimes.go); with no working control the check is not made.
func proveSeccompRuntimeDefault(ctx context.Context, t *Scenario, c *observe.Container) observe.Effect {
	control, unmade := t.seccompControl(ctx)
	if unmade != nil {
		return *unmade
	}
	rs := make([]probeResult, len(control))
	copy(rs, control)
	ok, desc := t.tryIn(ctx, c, enforceProbes...)
	tried := probeResults(ok, desc, func(r *probeResult, ok bool, desc string) { r.blockedOK, r.blocked = ok, desc })
	var seen []string
	for i := range rs {
		rs[i].blockedOK, rs[i].blocked = tried[i].blockedOK, tried[i].blocked
		seen = append(seen, rs[i].blocked)
	}
	must, notShown, made := enforceChecks(rs)
	e := observe.Effect{Detail: strings.Join(seen, ", ")}
	if len(notShown) > 0 {
		e.Detail += " (not shown: " + strings.Join(notShown, "; ") + ")"
	}
	switch {
	case !made:
		e.Unmade = "no syscall the runtime default profile blocks could be shown blocked on node " + t.NodeName() +
			": the Unconfined control failed for every probe: " + strings.Join(notShown, "; ")
	case len(must) > 0:
		e.Detail = strings.Join(must, "; ")
	default:
		e.Shown = true
	}
	return e
}

// tryProbes runs every probe in a container (in one exec) and records each
// result with set.
func tryProbes(ctx context.Context, t *Scenario, pod, container string, set func(*probeResult, bool, string)) []probeResult {
	ok, desc := t.TryAll(ctx, pod, container, enforceProbes...)
	return probeResults(ok, desc, set)
}

// probeResults records what each of enforceProbes did (ok, desc: TryAll's
// results) with set.
func probeResults(ok []bool, desc []string, set func(*probeResult, bool, string)) []probeResult {
	rs := make([]probeResult, len(enforceProbes))
	for i, p := range enforceProbes {
		rs[i].Probe = p
		set(&rs[i], ok[i], desc[i])
	}
	return rs
}

// enforceProbes each make one syscall (the Label) that the runtime default
// profile blocks for a container without added capabilities, and that an
// unconfined container makes without any. They are tried in an Unconfined
// container (the control: the command works there) and in the
// RuntimeDefault one (where the filter must make it fail). containerd's default profile (contrib/seccomp/
// seccomp_default.go, 1.7 and 2.x), CRI-O's (containers/common
// pkg/seccomp/default_linux.go) and Docker's allow personality(2) only for
// PER_LINUX, PER_LINUX32, UNAME26, UNAME26|PER_LINUX32 and the query
// 0xffffffff, and unshare(2) only with CAP_SYS_ADMIN.
var enforceProbes = []Probe{
	// busybox's linux64 -R calls personality(PER_LINUX|ADDR_NO_RANDOMIZE),
	// 0x40000: no namespace and no capability involved, so the control
	// works on every host.
	{Label: "personality(ADDR_NO_RANDOMIZE)", Shell: "linux64 -R true"},
	// unshare(CLONE_NEWUSER): the control fails where the host has user
	// namespaces off (user.max_user_namespaces=0, or a distribution's
	// switch for unprivileged ones); then this probe shows nothing.
	{Label: "unshare(CLONE_NEWUSER)", Shell: "unshare -U true"},
}

// probeResult is one probe tried in both containers.
type probeResult struct {
	Probe                       // its Label is the syscall
	controlOK, blockedOK bool   // the command succeeded: Unconfined, RuntimeDefault
	control, blocked     string // what each printed (Scenario.Try)
}

// enforceChecks judges the probes: every probe whose control works must
// fail under RuntimeDefault (must lists those that did not); a probe whose
// control fails too cannot show a block (noted in unmade). When no probe's
// control works, nothing shows that the filter blocks anything: made is
// false, and the check cannot be made.
func enforceChecks(rs []probeResult) (must, unmade []string, made bool) {
	for _, r := range rs {
		if !r.controlOK {
			unmade = append(unmade, fmt.Sprintf("%s fails unconfined too (%s)", r.Label, r.control))
			continue
		}
		made = true
		if r.blockedOK {
			must = append(must, fmt.Sprintf("a syscall the runtime default profile blocks succeeded: %s (%s)", r.Label, r.blocked))
		}
	}
	return must, unmade, made
}

// Probe is a shell command a container runs to show what its profile
// allows: Label names it in what the container saw.
type Probe struct{ Label, Shell string }

// ObserveRunning observes a container of pod (an init container or a
// sidecar too) while it runs, as the sub-case name judged against the
// oracle's case c, and shows by behaviour which profile it runs with. With
// no allowed probe, the container must run under a profile the oracle
// names an effect of (the pod's): the harness proves it now
// (ProveEffects), while the container still runs. With one, the container
// runs under a profile of its own that must allow it (the pod's profile
// must not reach it). A container that does not run is not probed: its
// observation then matches no expected outcome.
func (t *Scenario) ObserveRunning(ctx context.Context, pod, container, c, name string, allowed *Probe) Sub {
	s := Sub{Name: name, Obs: observe.Observation{Container: t.ObserveContainer(ctx, pod, container, false)}, Want: observe.ForCase(c)}
	if s.Obs.Container.State != skew.Running {
		return s
	}
	if allowed == nil {
		t.ProveEffects(ctx, s)
		return s
	}
	ok, desc := t.Try(ctx, pod, container, allowed.Label, allowed.Shell)
	s.Obs.Container.Behaviour = desc
	if !ok {
		s.Must = append(s.Must, allowed.Label+" must work under the container's own profile (the pod's must not apply): "+desc)
	}
	return s
}
