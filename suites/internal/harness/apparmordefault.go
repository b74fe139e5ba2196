package harness

import (
	"context"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// ProcWriteProbe opens /proc/uptime for writing (and reading), and writes
// nothing: the runtimes' default AppArmor profiles deny writes to the files
// directly in /proc ("deny @{PROC}/* w": containerd's
// contrib/apparmor/template.go, containers/common's, CRI-O's), while an
// unconfined container of the same privileges (root, CAP_DAC_OVERRIDE,
// /proc mounted read-write) opens it. /proc/uptime is on every kernel and
// neither masked nor read-only in a container (unlike /proc/sysrq-trigger,
// which the User-Mode Linux kernel lacks).
const ProcWriteProbe = "exec 3<>/proc/uptime"

// ProcWrite names ProcWriteProbe in what a container saw.
const ProcWrite = "open /proc/uptime for writing"

// appArmorControls holds, per node, what ProcWriteProbe did in an
// Unconfined container (the control): a fact of the node, kept for the
// suite process.
var appArmorControls = struct {
	sync.Mutex
	byNode map[string]controlResult
}{byNode: map[string]controlResult{}}

type controlResult struct {
	ok   bool
	desc string
}

// appArmorControlPod is the AppArmor Unconfined pod the harness runs for
// the control.
const appArmorControlPod = "apparmor-control"

// AppArmorControlFrom tries ProcWriteProbe in an Unconfined container of
// the spec and keeps it as the node's control (a spec that runs one anyway
// spares the harness its control pod). It returns what the probe did.
func (t *Scenario) AppArmorControlFrom(ctx context.Context, pod, container string) (bool, string) {
	ok, desc := t.Try(ctx, pod, container, ProcWrite, ProcWriteProbe)
	appArmorControls.Lock()
	appArmorControls.byNode[t.NodeName()] = controlResult{ok, desc}
	appArmorControls.Unlock()
	return ok, desc
}

// appArmorControl returns the node's control, running the harness's own
// Unconfined pod the first time. The pod carries both the field and the
// annotation, so that every API server and kubelet reads it: an API server
// before v1.30 drops the field, a kubelet before v1.30 reads only the
// annotation (the copy from the field happens from v1.30).
func (t *Scenario) appArmorControl(ctx context.Context) (controlResult, *observe.Effect) {
	appArmorControls.Lock()
	r, ok := appArmorControls.byNode[t.NodeName()]
	appArmorControls.Unlock()
	if ok {
		return r, nil
	}
	if unmade := t.startControlPod(ctx, appArmorControlPod, "the AppArmor Unconfined control pod",
		func(c *observe.Container) bool { return c.AppArmorProfile == "unconfined" },
		fx.ContainerAppArmor(fx.AppArmor(corev1.AppArmorProfileTypeUnconfined, nil)),
		fx.Annotation(skew.AppArmorAnnotation(names.ContainerName), "unconfined")); unmade != nil {
		return r, unmade
	}
	ok, desc := t.AppArmorControlFrom(ctx, appArmorControlPod, names.ContainerName)
	return controlResult{ok, desc}, nil
}

// proveAppArmorRuntimeDefault: under the runtime's default profile,
// opening /proc/uptime for writing fails with EACCES where the node's
// Unconfined control opens it, and a write to /tmp works (the deny-write
// Localhost profile would deny it). Without a working control the check
// is not made.
func proveAppArmorRuntimeDefault(ctx context.Context, t *Scenario, c *observe.Container) observe.Effect {
	control, unmade := t.appArmorControl(ctx)
	if unmade != nil {
		return *unmade
	}
	if !control.ok {
		return observe.Effect{Unmade: "the AppArmor Unconfined control cannot " + ProcWrite + " on node " + t.NodeName() +
			" (" + control.desc + "): nothing shows what the runtime default denies"}
	}
	ok, desc := t.tryIn(ctx, c, appArmorRuntimeDefaultProbes...)
	procOK, proc, writeOK, write := ok[0], desc[0], ok[1], desc[1]
	e := observe.Effect{Detail: proc + ", " + write + " (the Unconfined control: " + control.desc + ")"}
	e.Shown = !procOK && strings.Contains(proc, "Permission denied") && writeOK
	return e
}
