// Package agent is the node agent: one per node (a DaemonSet), it puts every
// SeccompProfile of its namespace under the kubelet's seccomp root, loads
// every AppArmorProfile with apparmor_parser where the node has AppArmor
// (Unsupported where it has not), writes the manifest of every StaticPod
// for its node into the kubelet's static pod directory, removes the files
// and unloads the AppArmor profiles of deleted objects, and creates and
// updates the status objects of its own node only (the
// security-profiles-operator scalable-status design: each node's status is
// written by that node alone, so nothing flaps). Node-specific events go on
// the profile, with the node name in the message.
//
// agent.go wires the informers and runs the work loop; sync.go handles one
// key (a profile, or the sweep of what deleted profiles left behind);
// seccomp.go, apparmor.go and staticpod.go put each kind on the node;
// status.go writes this node's statuses and the events; deploy.go renders
// the objects that deploy the agent and the aggregator.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/internal/kick"
)

// Config configures an Agent.
type Config struct {
	Node      string // this node's name (downward API spec.nodeName)
	Namespace string // the namespace of the profiles and their node statuses
	// SeccompRoot is where the kubelet's seccomp root is mounted in the agent
	// (/var/lib/kubelet/seccomp on the node).
	SeccompRoot string
	// AppArmorEnabledFile, DefaultAppArmorEnabledFile when empty.
	AppArmorEnabledFile string
	// AppArmorFS, DefaultAppArmorFS when empty.
	AppArmorFS string
	// AppArmorParser is the apparmor_parser command; "apparmor_parser" on
	// PATH when empty.
	AppArmorParser string
	// NoAppArmorLoad says that the agent runs without the privileges to load
	// AppArmor profiles (a seccomp-only deployment): AppArmorProfiles fail on
	// nodes with AppArmor, with that reason.
	NoAppArmorLoad bool
	// StaticPodDir is where the node's static pod directory (the kubelet's
	// staticPodPath) is mounted in the agent; empty when it is not, and
	// StaticPods for this node then fail, saying so.
	StaticPodDir string
	// StaticPodPath is that directory's path on the node (for the status).
	StaticPodPath string
	Dynamic       dynamic.Interface
	Core          kubernetes.Interface // for events
	// Resync is the informers' resync period (default 10s): every profile is
	// looked at again, so failed installs are retried, and files and
	// AppArmor profiles of deleted profiles are swept.
	Resync time.Duration
	// Log receives what the agent does and every error (default: nothing).
	Log *slog.Logger
}

// Agent installs the profiles of one namespace on one node.
type Agent struct {
	cfg Config
	mu  sync.Mutex
	// last status reported per node status name, to emit events on change only.
	last map[string]api.Status
	// written holds the node statuses this agent wrote last, with the
	// resource version they replaced: while the informer still has that
	// version, the written object is the newer one.
	written map[string]writtenStatus

	profileFactory, statusFactory dynamicinformer.DynamicSharedInformerFactory
	profiles                      map[string]informers.GenericInformer // by kind
	statuses                      informers.GenericInformer
	queue                         kick.Queue
}

// New returns an agent; it checks the configuration and sets up (without
// starting) informers on the profiles of the namespace and on the node
// statuses of this node only.
func New(cfg Config) (*Agent, error) {
	if cfg.Node == "" {
		return nil, errors.New("node name is empty (set it from the downward API: spec.nodeName)")
	}
	if cfg.Namespace == "" || cfg.SeccompRoot == "" || cfg.Dynamic == nil {
		return nil, errors.New("namespace, seccomp root and a client are required")
	}
	if cfg.AppArmorEnabledFile == "" {
		cfg.AppArmorEnabledFile = DefaultAppArmorEnabledFile
	}
	if cfg.AppArmorFS == "" {
		cfg.AppArmorFS = DefaultAppArmorFS
	}
	if cfg.Resync == 0 {
		cfg.Resync = 10 * time.Second
	}
	a := &Agent{cfg: cfg, last: map[string]api.Status{}, written: map[string]writtenStatus{},
		profiles: map[string]informers.GenericInformer{}, queue: kick.NewQueue("skewproof-agent")}
	a.profileFactory = dynamicinformer.NewFilteredDynamicSharedInformerFactory(cfg.Dynamic, cfg.Resync, cfg.Namespace, nil)
	a.statusFactory = dynamicinformer.NewFilteredDynamicSharedInformerFactory(cfg.Dynamic, cfg.Resync, cfg.Namespace,
		func(o *metav1.ListOptions) { o.LabelSelector = api.NodeSelector(cfg.Node) })
	for _, kind := range api.AgentKinds {
		res, _ := api.AgentResource(kind)
		inf := a.profileFactory.ForResource(res)
		a.profiles[kind] = inf
		if _, err := inf.Informer().AddEventHandler(kick.Enqueue(a.queue, func(u *unstructured.Unstructured) []string {
			return []string{kick.ProfileKey(kind, u.GetName())}
		})); err != nil {
			return nil, err
		}
	}
	a.statuses = a.statusFactory.ForResource(api.ProfileNodeStatuses)
	if _, err := a.statuses.Informer().AddEventHandler(kick.Enqueue(a.queue, kick.StatusProfileKeys)); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *Agent) logf(format string, args ...any) {
	if a.cfg.Log != nil {
		a.cfg.Log.Info(fmt.Sprintf(format, args...))
	}
}

// Start starts the informers and waits for their first lists.
func (a *Agent) Start(ctx context.Context) error {
	return kick.Start(ctx, "agent", a.profileFactory, a.statusFactory)
}

// Run starts the informers, does a full pass, calls ready, then works off
// the keys the informers' events (and their periodic resync) enqueue until
// ctx ends.
func (a *Agent) Run(ctx context.Context, ready func()) error {
	if err := a.Start(ctx); err != nil {
		return err
	}
	// The first full pass, tried again every 2 seconds until it succeeds.
	if err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		err := a.Sync(ctx)
		if err != nil && ctx.Err() == nil {
			a.logf("sync: %v", err)
		}
		return err == nil, nil
	}); err != nil {
		return nil // ctx ended
	}
	if ready != nil {
		ready()
	}
	go func() {
		t := time.NewTicker(a.cfg.Resync)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				a.queue.Add(sweepKey)
			}
		}
	}()
	kick.Work(ctx, a.queue, a.syncKey, func(key string, err error) { a.logf("%s: %v", key, err) })
	a.profileFactory.Shutdown()
	a.statusFactory.Shutdown()
	return nil
}

// Sync does one full pass from the informers' caches: every profile
// installed (or reported) and every static pod of this node written, the
// files and AppArmor profiles of deleted objects removed. Start must have
// been called.
func (a *Agent) Sync(ctx context.Context) error {
	var errs []error
	for _, kind := range api.AgentKinds {
		objs, err := a.profiles[kind].Lister().ByNamespace(a.cfg.Namespace).List(labels.Everything())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, o := range objs {
			u := o.(*unstructured.Unstructured)
			if err := a.syncKey(ctx, kind+"/"+u.GetName()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := a.syncKey(ctx, sweepKey); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Dir is this namespace's directory under the seccomp root.
func (a *Agent) Dir() string {
	return filepath.Join(a.cfg.SeccompRoot, api.SeccompDir, a.cfg.Namespace)
}

// nodePath shows a path inside the agent as the node's path.
func (a *Agent) nodePath(p string) string {
	rel, err := filepath.Rel(a.cfg.SeccompRoot, p)
	if err != nil {
		return p
	}
	return filepath.Join("<seccomp root>", rel)
}

func ptr[T any](v T) *T { return &v }
