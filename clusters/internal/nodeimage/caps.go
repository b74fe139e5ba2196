package nodeimage

import (
	"os"
	"strconv"
	"strings"
)

// CapNames are the capabilities by number (linux/capability.h).
var CapNames = []string{"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
	"CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP",
	"CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
	"CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE"}

// CapBoundingSet is this process's capability bounding set (CapBnd), all
// bits when it cannot be read.
func CapBoundingSet() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ^uint64(0)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "CapBnd:") {
			v, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(l, "CapBnd:")), 16, 64)
			if err == nil {
				return v
			}
		}
	}
	return ^uint64(0)
}

// MissingCaps names the capabilities up to the kernel's last that bnd lacks.
func MissingCaps(bnd uint64) []string {
	last := len(CapNames) - 1
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n < last {
			last = n
		}
	}
	var m []string
	for i := 0; i <= last; i++ {
		if bnd&(1<<uint(i)) == 0 {
			m = append(m, CapNames[i])
		}
	}
	return m
}
