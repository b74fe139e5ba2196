package harness

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// These tests need no cluster: they check how the kernel log is read for
// the SCMP_ACT_LOG case of seccomp/failure/row-2 and AppArmor's complain
// mode.

func TestKernelCannotLog(t *testing.T) {
	for _, c := range []struct{ facts, want string }{
		{"actions_logged: kill_process kill_thread trap errno user_notif trace log\naudit: yes\n", ""},
		{"actions_logged: kill_process kill_thread trap errno user_notif trace\naudit: yes\n", `without "log"`},
		{"actions_logged: kill_process log\naudit: no\n", "no audit support"},
		// No actions_logged file (a kernel before 4.14): nothing to say.
		{"actions_logged:\naudit: yes\n", ""},
	} {
		got := kernelCannotLog(c.facts, true)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("kernelCannotLog(%q) = %q, want %q", c.facts, got, c.want)
		}
	}
}

func TestSeccompLine(t *testing.T) {
	log := `[  829.7] audit: type=1326 audit(1795596030.924:2): auid=4294967295 uid=0 pid=1 comm="busyboxOTHER123" exe="/tmp/busyboxOTHER123" syscall=83
[  829.8] audit: type=1326 audit(1795596030.925:3): auid=4294967295 uid=0 pid=2 comm="busyboxABCDEFGH" exe="/tmp/busyboxABCDEFGH" syscall=83
`
	if got := auditLine(log, auditSeccomp, `comm="busyboxABCDEFGH"`); !strings.HasPrefix(got, "audit: type=1326") || !strings.Contains(got, "pid=2") {
		t.Errorf("auditLine = %q", got)
	}
	if got := auditLine(log, auditSeccomp, `comm="busyboxNOTTHERE"`); got != "" {
		t.Errorf("auditLine of an absent comm = %q", got)
	}
}

// AppArmor's complain mode needs audit support, not seccomp's
// actions_logged; its line must name the profile and the process.
func TestAppArmorAuditLine(t *testing.T) {
	if got := kernelCannotLog("actions_logged: kill_process\naudit: yes\n", false); got != "" {
		t.Errorf("kernelCannotLog for AppArmor = %q: actions_logged is seccomp's", got)
	}
	if got := kernelCannotLog("actions_logged: log\naudit: no\n", false); !strings.Contains(got, "no audit support") {
		t.Errorf("kernelCannotLog without audit = %q", got)
	}
	log := `[  12.1] audit: type=1400 audit(1.2:3): apparmor="DENIED" operation="mknod" profile="skewproof-deny-write" name="/tmp/x" comm="busyboxABCDEFGH"
[  12.2] audit: type=1400 audit(1.2:4): apparmor="ALLOWED" operation="mknod" profile="skewproof-deny-write" name="/tmp/x" comm="busyboxABCDEFGH"
`
	got := auditLine(log, auditAppArmor, `apparmor="ALLOWED"`, `profile="skewproof-deny-write"`, `comm="busyboxABCDEFGH"`)
	if !strings.Contains(got, "audit(1.2:4)") {
		t.Errorf("auditLine = %q, want the ALLOWED line", got)
	}
	if got := auditLine(log, auditSeccomp, `comm="busyboxABCDEFGH"`); got != "" {
		t.Errorf("an AppArmor line read as a seccomp one: %q", got)
	}
}

// An exec slower than the poll's window still reads the log: it runs with
// the spec's context, not the poll's deadline (on a host at load 50 a
// dmesg exec outlasted the 10-second window, and the read counted as a
// failure to read the log). A read that fails is still reported.
func TestPollKernelLogSlowExec(t *testing.T) {
	log := `[  829.8] audit: type=1326 audit(1795596030.925:3): auid=4294967295 uid=0 pid=2 comm="busyboxABCDEFGH" syscall=83`
	slow := func(ctx context.Context, script string) (string, string, error) {
		select {
		case <-time.After(300 * time.Millisecond):
			return log, "", nil
		case <-ctx.Done():
			return "", "", ctx.Err()
		}
	}
	line, readErr, err := pollKernelLog(context.Background(), 100*time.Millisecond, slow, auditSeccomp, `comm="busyboxABCDEFGH"`)
	if readErr != nil || err != nil || !strings.Contains(line, "pid=2") {
		t.Errorf("slow exec: line %q, read error %v, poll error %v", line, readErr, err)
	}
	failing := func(context.Context, string) (string, string, error) {
		return "", "dmesg: klogctl: Operation not permitted", errors.New("command terminated with exit code 1")
	}
	if _, readErr, _ := pollKernelLog(context.Background(), 100*time.Millisecond, failing, auditSeccomp, "x"); readErr == nil || !strings.Contains(readErr.Error(), "klogctl") {
		t.Errorf("failing exec: read error %v", readErr)
	}
}
