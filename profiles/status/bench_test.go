package status

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/api/apitest"
)

// messages is a slog handler that keeps the messages logged.
type messages struct {
	mu   sync.Mutex
	msgs []string
}

func (m *messages) Enabled(context.Context, slog.Level) bool { return true }
func (m *messages) WithAttrs([]slog.Attr) slog.Handler       { return m }
func (m *messages) WithGroup(string) slog.Handler            { return m }
func (m *messages) Handle(_ context.Context, r slog.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, r.Message)
	return nil
}

// durations are the durations in a log line, which vary from run to run.
var durations = regexp.MustCompile(`([0-9]+(\.[0-9]+)?(h|ms|m|s|µs|ns))+`)

func (m *messages) lines() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, s := range m.msgs {
		out = append(out, durations.ReplaceAllString(s, "D"))
	}
	return out
}

// collectGarbage makes the fake client delete a profile's node statuses
// with the profile, as the garbage collector does.
func collectGarbage(t *testing.T, dyn *dynfake.FakeDynamicClient) {
	dyn.PrependReactor("delete", "seccompprofiles", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.DeleteAction).GetName()
		objs, err := dyn.Tracker().List(api.ProfileNodeStatuses, api.GroupVersion.WithKind("ProfileNodeStatus"), a.GetNamespace())
		if err != nil {
			t.Error(err)
			return false, nil, nil
		}
		items, err := meta.ExtractList(objs)
		if err != nil {
			t.Error(err)
			return false, nil, nil
		}
		for _, it := range items {
			m, err := meta.Accessor(it)
			if err != nil {
				t.Error(err)
				continue
			}
			for _, ref := range m.GetOwnerReferences() {
				if ref.Name == name {
					if err := dyn.Tracker().Delete(api.ProfileNodeStatuses, a.GetNamespace(), m.GetName()); err != nil {
						t.Error(err)
					}
				}
			}
		}
		return false, nil, nil // the profile itself is deleted as usual
	})
}

func namespaceExists(t *testing.T, dyn *dynfake.FakeDynamicClient, ns string) bool {
	t.Helper()
	_, err := dyn.Resource(namespaces).Get(context.Background(), ns, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// Bench against a fake API server: every node status is written, each
// profile's statuses are listed by label and aggregated (the first
// profile's Failed node makes it Failed), the single-object alternative is
// sized on the first profile, and the garbage collection is timed; the namespace is
// deleted afterwards.
func TestBench(t *testing.T) {
	dyn := apitest.NewDynamic(t)
	collectGarbage(t, dyn)
	var log messages
	r, err := Bench(context.Background(), dyn, BenchOptions{Namespace: "scale", Nodes: 4, Profiles: 2, Workers: 3,
		FailedNode: 1, Log: slog.New(&log), GCTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Nodes != 4 || r.Profiles != 2 || r.Written != 8 || r.GCLeft != 0 || r.LargestNodeStatusBytes == 0 {
		t.Errorf("result %+v", r)
	}
	want := []ProfileFigures{
		{Name: "scale-profile-0", Listed: 4, Status: api.Failed, Nodes: map[api.Status]int32{api.Failed: 1, api.Installed: 3}},
		{Name: "scale-profile-1", Listed: 4, Status: api.Installed, Nodes: map[api.Status]int32{api.Installed: 4}},
	}
	if len(r.PerProfile) != len(want) {
		t.Fatalf("per profile %+v", r.PerProfile)
	}
	for i, p := range r.PerProfile {
		if p.StatusBytes == 0 {
			t.Errorf("%s: no status size", p.Name)
		}
		p.List, p.Aggregate, p.StatusBytes = 0, 0, 0
		if !reflect.DeepEqual(p, want[i]) {
			t.Errorf("profile %d: got %+v, want %+v", i, p, want[i])
		}
	}
	// The single-object figures are measured on the first profile (its
	// namespace and name, no UID in the fake).
	var s BenchResult
	p0 := api.Profile{Kind: api.KindSeccompProfile, Namespace: "scale", Name: "scale-profile-0",
		Content: benchContent}
	s.SingleObjectBytes, s.SingleObjectPerNode, s.SingleObjectMaxNodes = singleObject(p0, []string{"scale-node-00000", "scale-node-00001", "scale-node-00002", "scale-node-00003"})
	s.SingleObjectBytesLongNames, _, s.SingleObjectMaxNodesLongNames = singleObject(p0, []string{longNodeName(0), longNodeName(1), longNodeName(2), longNodeName(3)})
	if r.SingleObjectBytes != s.SingleObjectBytes || r.SingleObjectPerNode != s.SingleObjectPerNode || r.SingleObjectMaxNodes != s.SingleObjectMaxNodes ||
		r.SingleObjectBytesLongNames != s.SingleObjectBytesLongNames || r.SingleObjectMaxNodesLongNames != s.SingleObjectMaxNodesLongNames {
		t.Errorf("single object figures %+v, want %+v", r, s)
	}
	wantLog := []string{
		"8 node statuses written in D",
		"scale-profile-0: listed 4 node statuses in D, decoded and aggregated in D: Failed map[Failed:1 Installed:3]",
		"scale-profile-1: listed 4 node statuses in D, decoded and aggregated in D: Installed map[Installed:4]",
		fmt.Sprintf("largest node status %d bytes; single object: %d bytes at 4 nodes (%.1f bytes/node), passes 1 MiB at %d nodes; with 40-character names %d bytes, passes 1 MiB at %d nodes",
			r.LargestNodeStatusBytes, s.SingleObjectBytes, s.SingleObjectPerNode, s.SingleObjectMaxNodes, s.SingleObjectBytesLongNames, s.SingleObjectMaxNodesLongNames),
		"garbage collector removed every node status in D",
	}
	if got := log.lines(); !reflect.DeepEqual(got, wantLog) {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantLog, "\n"))
	}
	if namespaceExists(t, dyn, "scale") {
		t.Error("the namespace is still there")
	}
}

// Without a garbage collector the wait ends at GCTimeout and says how many
// node statuses were left; Keep leaves the namespace.
func TestBenchGCTimeout(t *testing.T) {
	dyn := apitest.NewDynamic(t)
	var log messages
	r, err := Bench(context.Background(), dyn, BenchOptions{Namespace: "scale", Nodes: 3, Profiles: 2,
		FailedNode: -1, Log: slog.New(&log), GCTimeout: time.Millisecond, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Written != 6 || r.GCLeft != 6 || r.GC == 0 {
		t.Errorf("result %+v", r)
	}
	if r.PerProfile[0].Status != api.Installed {
		t.Errorf("with FailedNode -1 every profile is Installed: %+v", r.PerProfile[0])
	}
	if l := log.lines(); l[len(l)-1] != "6 node statuses left D after their profiles were deleted" {
		t.Errorf("last log line %q", l[len(l)-1])
	}
	if !namespaceExists(t, dyn, "scale") {
		t.Error("Keep: the namespace must stay")
	}
}

// A failed write stops the writers and is the error; the namespace is
// deleted all the same.
func TestBenchWriteError(t *testing.T) {
	dyn := apitest.NewDynamic(t)
	var creates atomic.Int64
	dyn.PrependReactor("create", "profilenodestatuses", func(k8stesting.Action) (bool, runtime.Object, error) {
		if creates.Add(1) == 5 {
			return true, nil, errors.New("etcdserver: request is too large")
		}
		return false, nil, nil
	})
	r, err := Bench(context.Background(), dyn, BenchOptions{Namespace: "scale", Nodes: 50, Profiles: 2, Workers: 4, FailedNode: -1})
	if err == nil || !strings.Contains(err.Error(), "writing node statuses: etcdserver: request is too large") {
		t.Fatalf("error %v", err)
	}
	if r.Written < 4 || r.Written >= 100 {
		t.Errorf("written %d", r.Written)
	}
	if namespaceExists(t, dyn, "scale") {
		t.Error("the namespace is still there")
	}
}

// A write the API server fails with a transient error (etcd timed out) is
// retried and counted; one that timed out but was made is not written
// twice. A refusal of the object (too large) is not retried (above).
func TestBenchRetriesTransientWrites(t *testing.T) {
	defer func(b wait.Backoff) { writeBackoff = b }(writeBackoff)
	writeBackoff = wait.Backoff{Duration: time.Millisecond, Steps: 4}
	dyn := apitest.NewDynamic(t)
	collectGarbage(t, dyn)
	var creates atomic.Int64
	dyn.PrependReactor("create", "profilenodestatuses", func(k8stesting.Action) (bool, runtime.Object, error) {
		switch creates.Add(1) {
		case 3, 7:
			return true, nil, apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
		case 11:
			return true, nil, apierrors.NewTimeoutError("etcd is slow", 1)
		}
		return false, nil, nil
	})
	r, err := Bench(context.Background(), dyn, BenchOptions{Namespace: "scale", Nodes: 50, Profiles: 2, Workers: 4, FailedNode: -1, GCTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Written != 100 || r.Retried != 3 {
		t.Errorf("written %d, retried %d; want 100, 3", r.Written, r.Retried)
	}
	for _, e := range []error{errors.New("etcdserver: request is too large"), apierrors.NewBadRequest("etcdserver: request timed out in a field")} {
		if transientWrite(e) {
			t.Errorf("transientWrite(%v) = true", e)
		}
	}
}
