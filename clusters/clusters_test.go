package clusters

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/internal/cachedir"
)

// The restricted runtimes run with sh against a bundle, with a fake runc

// that records its arguments and the config.json it was handed.

func TestCNIConfigUsesPodCIDR(t *testing.T) {
	var c struct {
		Plugins []struct {
			Type string
			IPAM struct {
				Ranges [][]struct{ Subnet string }
			}
		}
	}
	if err := json.Unmarshal([]byte(cniConfig("10.244.3.0/24")), &c); err != nil {
		t.Fatalf("CNI config is not JSON: %v", err)
	}
	if c.Plugins[0].Type != "ptp" || c.Plugins[0].IPAM.Ranges[0][0].Subnet != "10.244.3.0/24" {
		t.Errorf("CNI config %+v does not use the node's podCIDR", c)
	}
}

// On an AppArmor host every node gets the host's securityfs and the

// containerd drop-in that lets containerd apply AppArmor (this host may

// have no AppArmor, so the pieces are checked here, not on a cluster).

func TestNodeAppArmorMounts(t *testing.T) {
	t.Setenv(cachedir.Env, t.TempDir())
	path, err := writeContainerdAppArmorDropIn()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "UnsetEnvironment=container") {
		t.Fatalf("drop-in %s: %q, %v", path, b, err)
	}
	ms := nodeAppArmorMounts(path)
	if len(ms) != 2 || ms[0].HostPath != securityFS || ms[0].ContainerPath != securityFS || ms[0].Readonly ||
		ms[1].HostPath != path || ms[1].ContainerPath != containerdDropInPath || !ms[1].Readonly {
		t.Errorf("mounts %+v", ms)
	}
	if !strings.HasPrefix(containerdDropInPath, "/etc/systemd/system/containerd.service.d/") {
		t.Errorf("the drop-in must be a containerd.service drop-in: %s", containerdDropInPath)
	}
}

func TestHungTasks(t *testing.T) {
	console := `[  612.3] INFO: task systemd-journal:231 blocked in I/O wait for more than 61 seconds.
[  612.3]       Not tainted 7.3.4 #1
[  612.4] INFO: task jbd2/ubda-8:120 blocked for more than 61 seconds.
[  673.9] INFO: task systemd-journal:231 blocked in I/O wait for more than 122 seconds.
[  674.0] INFO: task kubelet:400 is blocked on a mutex likely owned by task jbd2/ubda-8:120.
`
	if got := strings.Join(hungTasks([]byte(console)), ","); got != "systemd-journal,jbd2/ubda-8" {
		t.Errorf("hungTasks = %q", got)
	}
	if got := hungTasks([]byte("[ 1.0] Run /sbin/init as init process\n")); len(got) != 0 {
		t.Errorf("a quiet console: %v", got)
	}
}
