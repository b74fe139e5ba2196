package seccomp

import (
	"strings"
	"testing"
)

// These tests need no cluster: they check how the kernel log of the
// SCMP_ACT_LOG case of seccomp/failure/row-2 is read.

func TestKernelCannotLog(t *testing.T) {
	for _, c := range []struct{ facts, want string }{
		{"actions_logged: kill_process kill_thread trap errno user_notif trace log\naudit: yes\n", ""},
		{"actions_logged: kill_process kill_thread trap errno user_notif trace\naudit: yes\n", `without "log"`},
		{"actions_logged: kill_process log\naudit: no\n", "no audit support"},
		// No actions_logged file (a kernel before 4.14): nothing to say.
		{"actions_logged:\naudit: yes\n", ""},
	} {
		got := kernelCannotLog(c.facts)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("kernelCannotLog(%q) = %q, want %q", c.facts, got, c.want)
		}
	}
}

func TestSeccompLine(t *testing.T) {
	log := `[  829.7] audit: type=1326 audit(1795596030.924:2): auid=4294967295 uid=0 pid=1 comm="busyboxOTHER123" exe="/tmp/busyboxOTHER123" syscall=83
[  829.8] audit: type=1326 audit(1795596030.925:3): auid=4294967295 uid=0 pid=2 comm="busyboxABCDEFGH" exe="/tmp/busyboxABCDEFGH" syscall=83
`
	if got := seccompLine(log, `comm="busyboxABCDEFGH"`); !strings.HasPrefix(got, "audit: type=1326") || !strings.Contains(got, "pid=2") {
		t.Errorf("seccompLine = %q", got)
	}
	if got := seccompLine(log, `comm="busyboxNOTTHERE"`); got != "" {
		t.Errorf("seccompLine of an absent comm = %q", got)
	}
}
