package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew"
)

// KernelLogPod reads the kernel log of the scenario's node: busybox's
// dmesg (syslog(2)) in a pod pinned to the node. The kernel log is the node
// kernel's, not a container's: kind nodes share the host's, a User-Mode
// Linux node has its own. No node access is needed, only a pod: with
// CAP_SYSLOG (which syslog(2) asks for where kernel.dmesg_restrict is 1)
// and without a seccomp filter (a runtime default profile may allow
// syslog(2) only with CAP_SYSLOG, or not at all); nothing of the node is
// mounted. The spec's namespace is privileged. It serves
// seccomp/failure/row-2 (SCMP_ACT_LOG) and AppArmor's complain mode
// (EffectAppArmorComplainDenyWrite).
const KernelLogPod = "kernel-log"

// KernelLogWait is how long the kernel log is read again for a line.
const KernelLogWait = 10 * time.Second

// Audit record types of the kernel log lines read.
const (
	auditSeccomp  = "type=1326" // AUDIT_SECCOMP
	auditAppArmor = "type=1400" // AUDIT_APPARMOR_ALLOWED and its kin
)

// KernelLogReader is the reader pod of one spec; refused holds the API
// server's answer when it refused the pod.
type KernelLogReader struct{ refused []string }

// StartKernelLogReader creates the reader pod without waiting for it.
func (t *Scenario) StartKernelLogReader(ctx context.Context) KernelLogReader {
	o := t.Create(ctx, fx.Pod(KernelLogPod, fx.OnNode(t.NodeName()),
		fx.ContainerSeccomp(&corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}), fx.AddCapabilities("SYSLOG")))
	if o.Admission != skew.Accepted {
		return KernelLogReader{refused: o.Errors}
	}
	return KernelLogReader{}
}

// SeccompLogLine waits up to KernelLogWait for a seccomp log line (audit
// type 1326) containing match in the kernel log of the scenario's node; ""
// when there is none by then. Where the log cannot be read, or the kernel
// does not log SCMP_ACT_LOG, the check cannot be made: unmade says why.
// The reader pod is skewproof's own doing (SetUp: a failure on its own
// clusters); the kernel's configuration is the host's (a skip).
func (r KernelLogReader) SeccompLogLine(ctx context.Context, t *Scenario, match string) (string, *Unmade) {
	return r.line(ctx, t, auditSeccomp, true, match)
}

// AppArmorLogLine is SeccompLogLine for an AppArmor audit line (type
// 1400) holding every fragment of match, e.g. apparmor="ALLOWED".
func (r KernelLogReader) AppArmorLogLine(ctx context.Context, t *Scenario, match ...string) (string, *Unmade) {
	return r.line(ctx, t, auditAppArmor, false, match...)
}

func (r KernelLogReader) line(ctx context.Context, t *Scenario, auditType string, seccompLog bool, match ...string) (string, *Unmade) {
	node := t.NodeName()
	if r.refused != nil {
		return "", &Unmade{SetUp: true, Reason: fmt.Sprintf("the pod that reads the kernel log of node %s (CAP_SYSLOG, seccomp Unconfined) was refused: %s",
			node, strings.Join(r.refused, "; "))}
	}
	c := t.ObserveContainer(ctx, KernelLogPod, names.ContainerName, false)
	if c.State != skew.Running {
		return "", &Unmade{SetUp: true, Reason: fmt.Sprintf("the pod that reads the kernel log of node %s does not run: %s", node, c)}
	}
	out, _, err := t.Exec(ctx, KernelLogPod, names.ContainerName, "sh", "-c", kernelFactsScript)
	if err != nil {
		return "", &Unmade{SetUp: true, Reason: fmt.Sprintf("reading the seccomp and audit settings of node %s's kernel: %v", node, err)}
	}
	if why := kernelCannotLog(out, seccompLog); why != "" {
		return "", &Unmade{Reason: fmt.Sprintf("the kernel of node %s cannot show the log line: %s", node, why)}
	}
	line, readErr, err := pollKernelLog(ctx, KernelLogWait, func(ctx context.Context, script string) (string, string, error) {
		return t.Exec(ctx, KernelLogPod, names.ContainerName, "sh", "-c", script)
	}, auditType, match...)
	switch {
	case readErr != nil:
		return "", &Unmade{SetUp: true, Reason: fmt.Sprintf("reading the kernel log of node %s (dmesg in pod %s with CAP_SYSLOG): %v", node, KernelLogPod, readErr)}
	case err != nil && !wait.Interrupted(err):
		return "", &Unmade{SetUp: true, Reason: fmt.Sprintf("reading the kernel log of node %s: %v", node, err)}
	}
	// Not logged within KernelLogWait: the caller reports the absence.
	return line, nil
}

// pollKernelLog reads the kernel log with exec once a second for up to
// within until it holds a line of the audit type holding every fragment of
// match: the line ("" if none by then), the error of a read that failed,
// and the poll's own error. Each exec runs with ctx, not the poll's
// deadline: a read that deadline cut short (an exec takes seconds on a
// loaded host) is no failure to read the log.
func pollKernelLog(ctx context.Context, within time.Duration, exec func(ctx context.Context, script string) (string, string, error), auditType string, match ...string) (line string, readErr, err error) {
	err = wait.PollUntilContextTimeout(ctx, time.Second, within, true, func(context.Context) (bool, error) {
		// pipefail: a dmesg that cannot read the log fails the command;
		// no line of the type does not.
		out, stderr, err := exec(ctx, "set -o pipefail; dmesg | { grep -F "+auditType+" || true; }")
		if err != nil {
			readErr = fmt.Errorf("%v %s", err, strings.TrimSpace(stderr))
			return true, nil
		}
		line = auditLine(out, auditType, match...)
		return line != "", nil
	})
	return line, readErr, err
}

// kernelFactsScript prints the kernel's seccomp actions_logged and whether
// it has audit support (/proc/self/loginuid exists only with CONFIG_AUDIT).
const kernelFactsScript = "echo actions_logged: $(cat /proc/sys/kernel/seccomp/actions_logged); " +
	"if [ -e /proc/self/loginuid ]; then echo audit: yes; else echo audit: no; fi"

// kernelCannotLog says why a kernel does not log, from kernelFactsScript's
// output; "" when it does. Both SCMP_ACT_LOG and AppArmor's complain mode
// log through the audit subsystem; SCMP_ACT_LOG (seccompLog) only for the
// actions listed in kernel.seccomp.actions_logged
// (Documentation/userspace-api/seccomp_filter.rst,
// Documentation/admin-guide/sysctl/kernel.rst "seccomp").
func kernelCannotLog(facts string, seccompLog bool) string {
	var logged string
	audit := true
	for _, l := range strings.Split(facts, "\n") {
		if v, ok := strings.CutPrefix(l, "actions_logged:"); ok {
			logged = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(l, "audit:"); ok {
			audit = strings.TrimSpace(v) != "no"
		}
	}
	switch {
	case !audit:
		return "it has no audit support (no /proc/self/loginuid: CONFIG_AUDIT is off), through which the kernel logs it"
	case seccompLog && logged != "" && !slices.Contains(strings.Fields(logged), "log"):
		return fmt.Sprintf("kernel.seccomp.actions_logged is %q, without \"log\"", logged)
	}
	return ""
}

// auditLine is the first line of a kernel log of the audit type holding
// every fragment of match, from "audit:" on; "" when there is none.
func auditLine(log, auditType string, match ...string) string {
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, auditType) {
			continue
		}
		all := true
		for _, m := range match {
			all = all && strings.Contains(l, m)
		}
		if all {
			if j := strings.Index(l, "audit:"); j >= 0 {
				l = l[j:]
			}
			return strings.TrimSpace(l)
		}
	}
	return ""
}
