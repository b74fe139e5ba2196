package status

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	dynfake "k8s.io/client-go/dynamic/fake"

	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/api/apitest"
)

const testNS = "ns"

func profileStatus(t *testing.T, dyn *dynfake.FakeDynamicClient, name string) api.ProfileStatus {
	t.Helper()
	u, err := dyn.Resource(api.SeccompProfiles).Namespace(testNS).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := api.ProfileFromUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Status
}

// The aggregator, fed by its informers, follows the node statuses: one
// Failed node makes the aggregate Failed; once it is Installed, and the
// expected node set is complete, the aggregate is Installed. Statuses of
// another profile do not count.
func TestControllerFollowsNodeStatuses(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prof := &api.SeccompProfile{ObjectMeta: metav1.ObjectMeta{Name: "deny", Namespace: testNS, UID: "uid-deny", Generation: 2},
		Spec: api.SeccompProfileSpec{Content: "{}"}}
	p := api.Profile{Kind: api.KindSeccompProfile, Namespace: testNS, Name: "deny", UID: "uid-deny", Generation: 2}
	other := api.Profile{Kind: api.KindSeccompProfile, Namespace: testNS, Name: "other", UID: "uid-other", Generation: 1}
	dyn := apitest.NewDynamic(t, prof,
		p.NewNodeStatus("a", api.Installed, ""),
		p.NewNodeStatus("b", api.Failed, "permission denied"),
		other.NewNodeStatus("a", api.Failed, "not this profile's"))
	c := &Controller{Dyn: dyn, Namespace: testNS, Interval: time.Hour,
		Nodes: func(context.Context) ([]string, error) { return []string{"a", "b"}, nil }}
	stop := apitest.Background(t, cancel, func() error { return c.Run(ctx) })
	waitFor := func(what string, cond func(api.ProfileStatus) bool) {
		t.Helper()
		var ps api.ProfileStatus
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			ps = profileStatus(t, dyn, "deny")
			return cond(ps), nil
		}); err != nil {
			t.Fatalf("%s: profile status %+v", what, ps)
		}
	}
	waitFor("one failed node", func(ps api.ProfileStatus) bool {
		return ps.Status == api.Failed && ps.Nodes[api.Failed] == 1 && ps.Nodes[api.Installed] == 1 &&
			len(ps.NotReady) == 1 && ps.NotReady[0] == "b" && ps.ObservedGeneration == 2 && ps.LocalhostProfile == p.LocalhostProfile()
	})
	// Node b's agent repairs it: the status change alone (no resync within
	// the test: Interval is an hour) brings the aggregate to Installed.
	fixed, err := api.ToUnstructured(p.NewNodeStatus("b", api.Installed, ""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(api.ProfileNodeStatuses).Namespace(testNS).Update(ctx, fixed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("all installed", func(ps api.ProfileStatus) bool {
		return ps.Status == api.Installed && ps.Nodes[api.Installed] == 2 && len(ps.NotReady) == 0
	})
	stop()
}
