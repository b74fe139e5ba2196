package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// What TestIntegrationVendorMode watches during a real run (issue: nothing
// privileged but kind's own, nothing listening beyond loopback and the
// project's Docker network). The judging is here, in plain functions, so
// that it can be shown to fail without a cluster.

// podPrivileges lists what of a pod reaches beyond its container: every
// privileged container (init and ephemeral ones too) and the host
// namespaces it joins.
func podPrivileges(p *corev1.Pod) []string {
	var out []string
	check := func(kind, name string, sc *corev1.SecurityContext) {
		if sc != nil && sc.Privileged != nil && *sc.Privileged {
			out = append(out, fmt.Sprintf("%s %s privileged", kind, name))
		}
	}
	for _, c := range p.Spec.InitContainers {
		check("init container", c.Name, c.SecurityContext)
	}
	for _, c := range p.Spec.Containers {
		check("container", c.Name, c.SecurityContext)
	}
	for _, c := range p.Spec.EphemeralContainers {
		check("ephemeral container", c.Name, c.SecurityContext)
	}
	if p.Spec.HostNetwork {
		out = append(out, "hostNetwork")
	}
	if p.Spec.HostPID {
		out = append(out, "hostPID")
	}
	if p.Spec.HostIPC {
		out = append(out, "hostIPC")
	}
	return out
}

// privilegeViolation says why a pod's privileges are not allowed, or ""
// when they are: kind's own components in kube-system (kube-proxy, the
// static control-plane pods on the host network) may have them; nothing
// skewproof creates may (the node agent needs only CAP_MAC_ADMIN, see
// TestDaemonSetLeastPrivilege).
func privilegeViolation(p *corev1.Pod) string {
	privs := podPrivileges(p)
	if len(privs) == 0 || p.Namespace == "kube-system" {
		return ""
	}
	return fmt.Sprintf("pod %s/%s: %s", p.Namespace, p.Name, strings.Join(privs, ", "))
}

// listening is one listening socket of `ss -H -ltnu` in a node.
type listening struct {
	Addr netip.Addr // zero for a wildcard (*, 0.0.0.0, ::)
	Line string
}

// parseSS reads the local addresses of `ss -H -ltnu` (Netid State Recv-Q
// Send-Q Local:Port Peer:Port [Process]).
func parseSS(out string) ([]listening, error) {
	var ls []listening
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 6 {
			return nil, fmt.Errorf("ss line %q: fewer than six fields", line)
		}
		local := f[4]
		i := strings.LastIndex(local, ":")
		if i < 0 {
			return nil, fmt.Errorf("ss line %q: no port in %q", line, local)
		}
		host := strings.Trim(local[:i], "[]")
		host, _, _ = strings.Cut(host, "%") // 127.0.0.53%lo
		l := listening{Line: strings.Join(f, " ")}
		if host != "*" {
			a, err := netip.ParseAddr(host)
			if err != nil {
				return nil, fmt.Errorf("ss line %q: %v", line, err)
			}
			if !a.IsUnspecified() {
				l.Addr = a.Unmap()
			}
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// nodeAddr is one address of `ip -o addr` in a node.
type nodeAddr struct {
	Iface  string
	Prefix netip.Prefix
}

// parseIPAddr reads `ip -o addr` (index: iface family addr/len ...).
func parseIPAddr(out string) ([]nodeAddr, error) {
	var as []nodeAddr
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 4 || (f[2] != "inet" && f[2] != "inet6") {
			return nil, fmt.Errorf("ip addr line %q", line)
		}
		p, err := netip.ParsePrefix(f[3])
		if err != nil {
			return nil, fmt.Errorf("ip addr line %q: %v", line, err)
		}
		as = append(as, nodeAddr{Iface: f[1], Prefix: p})
	}
	return as, nil
}

// nodeReachViolations checks a node's network namespace: every address it
// has is loopback, link-local, in its pod network (the CNI's veths), or on
// the project's Docker network; and so every socket listening on a
// wildcard or on one of those addresses is reachable from nowhere else.
// A socket bound to an address the node does not have is a violation too.
func nodeReachViolations(node string, addrs []nodeAddr, socks []listening, podCIDRs, network []netip.Prefix) []string {
	var v []string
	in := func(a netip.Addr, ps []netip.Prefix) bool {
		return slices.ContainsFunc(ps, func(p netip.Prefix) bool { return p.Contains(a) })
	}
	own := map[netip.Addr]bool{}
	for _, na := range addrs {
		a := na.Prefix.Addr()
		own[a] = true
		switch {
		case a.IsLoopback(), a.IsLinkLocalUnicast():
		case in(a, podCIDRs):
		case na.Iface == "eth0" && in(a, network):
		default:
			v = append(v, fmt.Sprintf("node %s: %s has %s, outside loopback, the pod network %v and the project's Docker network %v", node, na.Iface, na.Prefix, podCIDRs, network))
		}
	}
	for _, s := range socks {
		if s.Addr.IsValid() && !s.Addr.IsLoopback() && !own[s.Addr] {
			v = append(v, fmt.Sprintf("node %s: listens on %s, an address the node does not have: %s", node, s.Addr, s.Line))
		}
	}
	return v
}

// procListening lists the listening TCP sockets and bound UDP sockets of a
// process, from /proc (the host network namespace, as the test's): the
// local address of each socket the process holds.
func procListening(pid int) ([]netip.AddrPort, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var out []netip.AddrPort
	for _, f := range []string{"tcp", "tcp6", "udp", "udp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			return nil, err
		}
		rows, err := parseProcNet(string(b), strings.HasPrefix(f, "tcp"))
		if err != nil {
			return nil, fmt.Errorf("/proc/%d/net/%s: %v", pid, f, err)
		}
		for ino, ap := range rows {
			if inodes[ino] {
				out = append(out, ap)
			}
		}
	}
	return out, nil
}

// parseProcNet reads /proc/net/{tcp,tcp6,udp,udp6}: the local address of
// every listening (TCP state 0A) or bound (UDP state 07) socket by inode.
func parseProcNet(s string, tcp bool) (map[string]netip.AddrPort, error) {
	want := "07"
	if tcp {
		want = "0A"
	}
	out := map[string]netip.AddrPort{}
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Scan() // header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 {
			continue
		}
		if f[3] != want {
			continue
		}
		ap, err := procNetAddr(f[1])
		if err != nil {
			return nil, err
		}
		out[f[9]] = ap
	}
	return out, sc.Err()
}

// procNetAddr decodes "0100007F:1F90": the address as 32-bit words in host
// (little-endian) order, the port in hex.
func procNetAddr(s string) (netip.AddrPort, error) {
	h, p, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(p, 16, 16)
	if !ok || err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q", s)
	}
	b, err := hex.DecodeString(h)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.AddrPort{}, fmt.Errorf("address %q", s)
	}
	for i := 0; i < len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	a, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), nil
}

func TestPrivilegeViolation(t *testing.T) {
	yes := true
	priv := &corev1.SecurityContext{Privileged: &yes}
	for _, c := range []struct {
		pod  corev1.Pod
		want string
	}{
		{corev1.Pod{}, ""},
		{corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-proxy", SecurityContext: priv}}}}, ""},
		{corev1.Pod{Spec: corev1.PodSpec{HostNetwork: true, EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", SecurityContext: priv}}}}},
			"pod ns/p: ephemeral container debug privileged, hostNetwork"},
		{corev1.Pod{Spec: corev1.PodSpec{HostPID: true, InitContainers: []corev1.Container{{Name: "i", SecurityContext: priv}}}},
			"pod ns/p: init container i privileged, hostPID"},
	} {
		p := c.pod
		p.Namespace, p.Name = "ns", "p"
		if c.want == "" && len(podPrivileges(&p)) > 0 {
			p.Namespace = "kube-system" // kind's own
		}
		if got := privilegeViolation(&p); got != c.want {
			t.Errorf("%+v: %q, want %q", p.Spec, got, c.want)
		}
	}
}

// The output of a kind worker of this project (captured with ss and ip in
// the node), judged as it is and with one address too many.
func TestNodeReachViolations(t *testing.T) {
	ss := `udp   UNCONN 0      0         127.0.0.11:35771      0.0.0.0:*
tcp   LISTEN 0      4096       127.0.0.1:10249      0.0.0.0:*    users:(("kube-proxy",pid=360,fd=11))
tcp   LISTEN 0      4096               *:10256            *:*    users:(("kube-proxy",pid=360,fd=10))
tcp   LISTEN 0      4096      172.18.0.3:2379      0.0.0.0:*    users:(("etcd",pid=521,fd=9))
tcp   LISTEN 0      4096            [::]:10250            [::]:*
tcp   LISTEN 0      4096   127.0.0.53%lo:53          0.0.0.0:*`
	ip := `1: lo    inet 127.0.0.1/8 scope host lo\       valid_lft forever preferred_lft forever
1: lo    inet6 ::1/128 scope host proto kernel_lo \       valid_lft forever preferred_lft forever
2: vethfbb311ea    inet 10.244.1.1/32 scope global vethfbb311ea\       valid_lft forever preferred_lft forever
935: eth0    inet 172.18.0.3/16 brd 172.18.255.255 scope global eth0\       valid_lft forever preferred_lft forever
935: eth0    inet6 fc00:a84f:2ba2:9604::3/64 scope global nodad \       valid_lft forever preferred_lft forever
935: eth0    inet6 fe80::42:acff:fe12:2/64 scope link proto kernel_ll \       valid_lft forever preferred_lft forever`
	socks, err := parseSS(ss)
	if err != nil || len(socks) != 6 || socks[2].Addr.IsValid() || socks[4].Addr.IsValid() || socks[3].Addr.String() != "172.18.0.3" {
		t.Fatalf("parseSS: %v %+v", err, socks)
	}
	addrs, err := parseIPAddr(ip)
	if err != nil || len(addrs) != 6 {
		t.Fatalf("parseIPAddr: %v %+v", err, addrs)
	}
	pods := []netip.Prefix{netip.MustParsePrefix("10.244.1.0/24")}
	network := []netip.Prefix{netip.MustParsePrefix("172.18.0.0/16"), netip.MustParsePrefix("fc00:a84f:2ba2:9604::/64")}
	if v := nodeReachViolations("w", addrs, socks, pods, network); len(v) != 0 {
		t.Errorf("a node of the project: %v", v)
	}
	// eth0 on another network, an interface of a network nobody chose, a
	// socket on an address the node does not have.
	other := []netip.Prefix{netip.MustParsePrefix("172.19.0.0/16"), netip.MustParsePrefix("fc00:a84f:2ba2:9604::/64")}
	if v := nodeReachViolations("w", addrs, socks, pods, other); len(v) != 1 {
		t.Errorf("eth0 outside the project's network: %v", v)
	}
	more := append(slices.Clone(addrs), nodeAddr{"docker0", netip.MustParsePrefix("192.168.5.1/24")})
	if v := nodeReachViolations("w", more, socks, pods, network); len(v) != 1 || !strings.Contains(v[0], "docker0") {
		t.Errorf("an extra interface: %v", v)
	}
	if _, err := parseSS("tcp LISTEN 0 4096 nonsense:80 0.0.0.0:*"); err == nil {
		t.Error("a local address that is no address was accepted")
	}
}

func TestProcNetAddr(t *testing.T) {
	tcp := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:8CA1 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0
   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 100 0 0 10 0
   2: 0100007F:8CA2 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0`
	rows, err := parseProcNet(tcp, true)
	if err != nil || len(rows) != 2 || rows["4242"].String() != "127.0.0.1:36001" || rows["4343"].String() != "0.0.0.0:8080" {
		t.Errorf("%v %v", rows, err)
	}
	tcp6 := `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5151 1 0000000000000000 100 0 0 10 0`
	rows, err = parseProcNet(tcp6, true)
	if err != nil || rows["5151"].String() != "[::1]:8080" {
		t.Errorf("tcp6: %v %v", rows, err)
	}
	// This process's own sockets: a listener it opens is found, with its
	// address and port.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got, err := procListening(os.Getpid())
	if err != nil || !slices.Contains(got, netip.MustParseAddrPort(l.Addr().String())) {
		t.Errorf("procListening: %v %v, want %s among them", got, err, l.Addr())
	}
}
