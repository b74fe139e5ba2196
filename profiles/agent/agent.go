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
package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/internal/kick"
)

// DefaultAppArmorEnabledFile says whether the kernel has AppArmor enabled
// ("Y"); it is absent when the kernel has no AppArmor at all.
const DefaultAppArmorEnabledFile = "/sys/module/apparmor/parameters/enabled"

// DefaultAppArmorFS is AppArmor's directory in securityfs; its "profiles"
// file lists the loaded profiles. The DaemonSet mounts the node's
// /sys/kernel/security there.
const DefaultAppArmorFS = "/sys/kernel/security/apparmor"

// AppArmorRecordDir is the directory, under this namespace's directory of
// the seccomp root, where the agent keeps the text of every AppArmor
// profile it loaded, so that it can unload it once the profile is gone,
// across restarts too.
const AppArmorRecordDir = ".apparmor"

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
	Logf   func(format string, args ...any)
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

type writtenStatus struct {
	// replaced holds the resource versions this agent's writes superseded
	// since the informer last caught up ("" for a create).
	replaced map[string]bool
	obj      *unstructured.Unstructured
}

// sweepKey asks for a pass over the files and AppArmor records of profiles
// that are gone.
const sweepKey = "sweep"

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
	if a.cfg.Logf != nil {
		a.cfg.Logf(format, args...)
	}
}

// Start starts the informers and waits for their first lists.
func (a *Agent) Start(ctx context.Context) error {
	a.profileFactory.Start(ctx.Done())
	a.statusFactory.Start(ctx.Done())
	infs := []cache.SharedIndexInformer{a.statuses.Informer()}
	for _, inf := range a.profiles {
		infs = append(infs, inf.Informer())
	}
	return kick.WaitForSync(ctx, "agent", infs...)
}

// Run starts the informers, does a full pass, calls ready, then works off
// the keys the informers' events (and their periodic resync) enqueue until
// ctx ends.
func (a *Agent) Run(ctx context.Context, ready func()) error {
	if err := a.Start(ctx); err != nil {
		return err
	}
	for {
		err := a.Sync(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		a.logf("sync: %v", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(2 * time.Second):
		}
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

// syncKey handles one key: a profile "kind/name", or the sweep.
func (a *Agent) syncKey(ctx context.Context, key string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if key == sweepKey {
		return a.sweep(ctx)
	}
	kind, name, ok := strings.Cut(key, "/")
	inf := a.profiles[kind]
	if !ok || inf == nil {
		return nil
	}
	o, err := inf.Lister().ByNamespace(a.cfg.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return a.removeProfile(ctx, kind, name)
	}
	if err != nil {
		return err
	}
	u := o.(*unstructured.Unstructured)
	if u.GetDeletionTimestamp() != nil {
		return a.removeProfile(ctx, kind, name)
	}
	var p api.Profile
	if kind == api.KindStaticPod {
		var node string
		if p, node, err = api.StaticPodFromUnstructured(u); err == nil && node != a.cfg.Node {
			// Another node's: nothing of it belongs here.
			return a.removeProfile(ctx, kind, name)
		}
	} else {
		p, err = api.ProfileFromUnstructured(u)
	}
	if err != nil {
		return err
	}
	cur, err := a.currentStatus(p.Name)
	if err != nil {
		return err
	}
	return a.syncProfile(ctx, p, cur)
}

// currentStatus is this node's status object of a profile: the informer's,
// or the one this agent wrote last while the informer has not seen it yet.
func (a *Agent) currentStatus(profile string) (*unstructured.Unstructured, error) {
	name := api.NodeStatusName(profile, a.cfg.Node)
	var cached *unstructured.Unstructured
	o, err := a.statuses.Lister().ByNamespace(a.cfg.Namespace).Get(name)
	switch {
	case err == nil:
		cached = o.(*unstructured.Unstructured)
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	w, ok := a.written[name]
	switch {
	case !ok:
	case cached == nil && w.replaced[""]:
		// Created by this agent, not seen by the informer yet.
		return w.obj.DeepCopy(), nil
	case cached != nil && cached.GetUID() == w.obj.GetUID() && w.replaced[cached.GetResourceVersion()]:
		// The informer still has a version this agent replaced.
		return w.obj.DeepCopy(), nil
	default:
		delete(a.written, name)
	}
	if cached == nil {
		return nil, nil
	}
	return cached.DeepCopy(), nil
}

// removeProfile undoes a profile that is gone: its seccomp file removed, its
// AppArmor profile unloaded or its static pod manifest removed, and this
// node's status of it deleted (the garbage collector deletes it too,
// through the owner reference).
func (a *Agent) removeProfile(ctx context.Context, kind, name string) error {
	var err error
	switch kind {
	case api.KindSeccompProfile:
		f := filepath.Join(a.Dir(), name+".json")
		if rerr := os.Remove(f); rerr == nil {
			a.logf("removed %s (its profile is gone)", a.nodePath(f))
		} else if !errors.Is(rerr, os.ErrNotExist) {
			err = rerr
		}
	case api.KindAppArmorProfile:
		err = a.unloadAppArmor(ctx, name)
	case api.KindStaticPod:
		err = a.removeStaticPod(name)
	}
	if derr := a.deleteStaleStatus(ctx, kind, name); derr != nil {
		err = errors.Join(err, derr)
	}
	return err
}

// deleteStaleStatus deletes this node's status of a profile that is gone,
// if the informer still has it.
func (a *Agent) deleteStaleStatus(ctx context.Context, kind, name string) error {
	sn := api.NodeStatusName(name, a.cfg.Node)
	delete(a.written, sn)
	o, err := a.statuses.Lister().ByNamespace(a.cfg.Namespace).Get(sn)
	if err != nil {
		return nil
	}
	u := o.(*unstructured.Unstructured)
	if k, _, _ := unstructured.NestedString(u.Object, "profileKind"); k != kind {
		return nil
	}
	err = a.cfg.Dynamic.Resource(api.ProfileNodeStatuses).Namespace(a.cfg.Namespace).Delete(ctx, sn,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr(u.GetUID())}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting status %s: %w", sn, err)
	}
	return nil
}

// sweep removes the seccomp files and static pod manifests and unloads the
// AppArmor profiles whose objects are gone (deleted while the agent was not
// running, too).
func (a *Agent) sweep(ctx context.Context) error {
	want := map[string]bool{}
	for _, kind := range api.AgentKinds {
		objs, err := a.profiles[kind].Lister().ByNamespace(a.cfg.Namespace).List(labels.Everything())
		if err != nil {
			return err
		}
		for _, o := range objs {
			u := o.(*unstructured.Unstructured)
			if u.GetDeletionTimestamp() != nil {
				continue
			}
			if kind == api.KindStaticPod {
				if node, _, _ := unstructured.NestedString(u.Object, "spec", "nodeName"); node != a.cfg.Node {
					continue
				}
			}
			want[kind+"/"+u.GetName()] = true
		}
	}
	var errs []error
	if err := a.removeStale(want); err != nil {
		errs = append(errs, err)
	}
	if err := a.removeStaleStaticPods(want); err != nil {
		errs = append(errs, err)
	}
	names, err := a.appArmorRecords()
	if err != nil {
		errs = append(errs, err)
	}
	for _, n := range names {
		if !want[api.KindAppArmorProfile+"/"+n] {
			if err := a.unloadAppArmor(ctx, n); err != nil {
				errs = append(errs, err)
			}
		}
	}
	// This node's statuses of profiles that are gone (the garbage collector
	// removes them too).
	sts, err := a.statuses.Lister().ByNamespace(a.cfg.Namespace).List(labels.Everything())
	if err != nil {
		errs = append(errs, err)
	}
	for _, o := range sts {
		u := o.(*unstructured.Unstructured)
		kind, _, _ := unstructured.NestedString(u.Object, "profileKind")
		name, _, _ := unstructured.NestedString(u.Object, "profileName")
		node, _, _ := unstructured.NestedString(u.Object, "nodeName")
		if node == a.cfg.Node && kind != "" && name != "" && !want[kind+"/"+name] {
			if err := a.deleteStaleStatus(ctx, kind, name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Dir is this namespace's directory under the seccomp root.
func (a *Agent) Dir() string {
	return filepath.Join(a.cfg.SeccompRoot, api.SeccompDir, a.cfg.Namespace)
}

func (a *Agent) syncProfile(ctx context.Context, p api.Profile, cur *unstructured.Unstructured) error {
	var st api.ProfileNodeStatus
	if cur != nil {
		if err := api.FromUnstructured(cur, &st); err != nil {
			return err
		}
		if !ownedBy(st.OwnerReferences, p.UID) {
			// A status left by a former profile of this name: the garbage
			// collector removes it; start afresh.
			if err := a.cfg.Dynamic.Resource(api.ProfileNodeStatuses).Namespace(p.Namespace).Delete(ctx, cur.GetName(),
				metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr(cur.GetUID())}}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			delete(a.written, cur.GetName())
			cur = nil
		}
	}
	// Fast path: already reported for this generation and still true.
	if cur != nil && st.ProfileGeneration == p.Generation {
		switch st.Status {
		case api.Installed:
			if p.Kind == api.KindSeccompProfile && a.fileIs(p) {
				return nil
			}
			if p.Kind == api.KindAppArmorProfile {
				if loaded, known := a.appArmorLoaded(p.Name); loaded || !known {
					return nil
				}
				a.logf("AppArmor profile %s is no longer loaded: loading it again", p.Name)
			}
			if p.Kind == api.KindStaticPod && a.staticPodFileIs(p) {
				return nil
			}
		case api.Unsupported:
			return nil
		}
	}
	if cur == nil {
		// The design note: create this node's status first, then progress.
		created, err := a.writeStatus(ctx, p, nil, api.Pending, "")
		if err != nil {
			return err
		}
		cur = created
		st.Status, st.ProfileGeneration = api.Pending, p.Generation
	}
	// Installing marks new work (a new profile or generation); a retry
	// after a failure goes straight to its result, so a node that keeps
	// failing does not move back and forth.
	newWork := st.Status == api.Pending || (st.ProfileGeneration != p.Generation && st.Status != api.Installing)
	var (
		s   api.Status
		msg string
	)
	// installing reports Installing before new work on this node.
	installing := func() error {
		if !newWork {
			return nil
		}
		updated, err := a.writeStatus(ctx, p, cur, api.Installing, "")
		if err == nil {
			cur = updated
		}
		return err
	}
	switch p.Kind {
	case api.KindSeccompProfile:
		if err := installing(); err != nil {
			return err
		}
		s, msg = api.Installed, ""
		if err := a.writeSeccomp(p); err != nil {
			s, msg = api.Failed, err.Error()
		}
	case api.KindAppArmorProfile:
		if ok, why := AppArmorEnabled(a.cfg.AppArmorEnabledFile); !ok {
			s, msg = api.Unsupported, why
			break
		}
		if err := installing(); err != nil {
			return err
		}
		s, msg = a.loadAppArmor(ctx, p)
	case api.KindStaticPod:
		if err := installing(); err != nil {
			return err
		}
		s, msg = a.writeStaticPod(p)
	}
	_, err := a.writeStatus(ctx, p, cur, s, msg)
	return err
}

func (a *Agent) fileIs(p api.Profile) bool {
	b, err := os.ReadFile(filepath.Join(a.Dir(), p.Name+".json"))
	return err == nil && bytes.Equal(b, []byte(p.Content))
}

// writeSeccomp writes the profile file atomically (temporary file, rename).
func (a *Agent) writeSeccomp(p api.Profile) error {
	if !json.Valid([]byte(p.Content)) {
		return errors.New("the profile content is not valid JSON")
	}
	if err := api.ValidateProfileName(p.Name); err != nil {
		return err
	}
	dir := a.Dir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", a.nodePath(dir), err)
	}
	final := filepath.Join(dir, p.Name+".json")
	tmp, err := os.CreateTemp(dir, "."+p.Name+".tmp-")
	if err != nil {
		return fmt.Errorf("writing %s: %w", a.nodePath(final), err)
	}
	_, werr := tmp.WriteString(p.Content)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), final)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", a.nodePath(final), werr)
	}
	return nil
}

// nodePath shows a path inside the agent as the node's path.
func (a *Agent) nodePath(p string) string {
	rel, err := filepath.Rel(a.cfg.SeccompRoot, p)
	if err != nil {
		return p
	}
	return filepath.Join("<seccomp root>", rel)
}

// removeStale deletes the seccomp files of profiles that no longer exist
// (want holds "SeccompProfile/<name>" of those that do).
func (a *Agent) removeStale(want map[string]bool) error {
	entries, err := os.ReadDir(a.Dir())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() || want[api.KindSeccompProfile+"/"+strings.TrimSuffix(e.Name(), ".json")] {
			continue
		}
		if !strings.HasSuffix(e.Name(), ".json") && !strings.Contains(e.Name(), ".tmp-") {
			continue
		}
		if err := os.Remove(filepath.Join(a.Dir(), e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		} else {
			a.logf("removed %s (its profile is gone)", a.nodePath(filepath.Join(a.Dir(), e.Name())))
		}
	}
	return errors.Join(errs...)
}

// AppArmorEnabled reports whether the node's kernel has AppArmor enabled,
// and why not.
func AppArmorEnabled(enabledFile string) (bool, string) {
	b, err := os.ReadFile(enabledFile)
	if errors.Is(err, os.ErrNotExist) {
		return false, "the kernel has no AppArmor (" + enabledFile + " is absent)"
	}
	if err != nil {
		return false, fmt.Sprintf("cannot read %s: %v", enabledFile, err)
	}
	if v := strings.TrimSpace(string(b)); v != "Y" {
		return false, fmt.Sprintf("AppArmor is disabled (%s is %q)", enabledFile, v)
	}
	return true, ""
}

// parser finds apparmor_parser.
func (a *Agent) parser() (string, error) {
	name := a.cfg.AppArmorParser
	if name == "" {
		name = "apparmor_parser"
	}
	return exec.LookPath(name)
}

// runParser runs apparmor_parser with the policy text on its standard input;
// the cache is neither read nor written (-K), so nothing is written in the
// agent's read-only root file system.
func (a *Agent) runParser(ctx context.Context, parser, op, policy string) error {
	cmd := exec.CommandContext(ctx, parser, op, "--skip-cache")
	cmd.Stdin = strings.NewReader(policy)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("apparmor_parser %s: %s", op, msg)
	}
	return nil
}

// loadAppArmor loads an AppArmor profile (the node has AppArmor): the text
// is recorded first (so that it can be unloaded later), then loaded with
// replace semantics, then looked for among the loaded profiles in
// securityfs when that file can be read.
func (a *Agent) loadAppArmor(ctx context.Context, p api.Profile) (api.Status, string) {
	if a.cfg.NoAppArmorLoad {
		return api.Failed, "AppArmor is enabled but the agent is deployed without the privileges to load AppArmor profiles (seccomp only)"
	}
	if err := api.ValidateProfileName(p.Name); err != nil {
		return api.Failed, err.Error()
	}
	parser, err := a.parser()
	if err != nil {
		return api.Failed, "AppArmor is enabled but apparmor_parser is not in the agent image"
	}
	if _, err := os.Stat(a.cfg.AppArmorFS); err != nil {
		// E.g. a node that is itself a container without securityfs mounted.
		return api.Failed, fmt.Sprintf("AppArmor is enabled but its securityfs directory %s is not there (%v): the node's /sys/kernel/security must be securityfs", a.cfg.AppArmorFS, err)
	}
	if err := a.recordAppArmor(p.Name, p.Content); err != nil {
		// Loading still works; only unloading after a restart would miss it.
		a.logf("recording AppArmor profile %s: %v", p.Name, err)
	}
	if err := a.runParser(ctx, parser, "--replace", p.Content); err != nil {
		return api.Failed, err.Error()
	}
	if loaded, known := a.appArmorLoaded(p.Name); known && !loaded {
		return api.Failed, fmt.Sprintf("apparmor_parser succeeded but no profile %q is in %s: the policy must define a profile named like the object",
			p.Name, filepath.Join(a.cfg.AppArmorFS, "profiles"))
	}
	return api.Installed, ""
}

// unloadAppArmor removes a profile this agent loaded (apparmor_parser
// --remove with the recorded text) and forgets it.
func (a *Agent) unloadAppArmor(ctx context.Context, name string) error {
	rec := filepath.Join(a.Dir(), AppArmorRecordDir, name)
	policy, err := os.ReadFile(rec)
	if errors.Is(err, os.ErrNotExist) {
		return nil // never loaded here
	}
	if err != nil {
		return err
	}
	if ok, _ := AppArmorEnabled(a.cfg.AppArmorEnabledFile); ok {
		parser, err := a.parser()
		if err != nil {
			return fmt.Errorf("unloading AppArmor profile %s: apparmor_parser is not in the agent image", name)
		}
		if err := a.runParser(ctx, parser, "--remove", string(policy)); err != nil {
			if loaded, known := a.appArmorLoaded(name); !known || loaded {
				return fmt.Errorf("unloading AppArmor profile %s: %w", name, err)
			}
			// Not loaded (e.g. the node rebooted): nothing to remove.
		}
		a.logf("unloaded AppArmor profile %s (its profile is gone)", name)
	}
	if err := os.Remove(rec); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// recordAppArmor keeps the text of a loaded profile.
func (a *Agent) recordAppArmor(name, policy string) error {
	dir := filepath.Join(a.Dir(), AppArmorRecordDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(policy)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

// appArmorRecords lists the profiles this agent loaded and has not unloaded.
func (a *Agent) appArmorRecords() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(a.Dir(), AppArmorRecordDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// appArmorLoaded reports whether the kernel lists a profile of that name
// (lines "name (mode)" of <securityfs>/apparmor/profiles); known is false
// when that file cannot be read.
func (a *Agent) appArmorLoaded(name string) (loaded, known bool) {
	b, err := os.ReadFile(filepath.Join(a.cfg.AppArmorFS, "profiles"))
	if err != nil {
		return false, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if i := strings.LastIndex(l, " ("); i >= 0 && l[:i] == name {
			return true, true
		}
	}
	return false, true
}

// writeStatus creates (cur == nil) or updates this node's status of p, and
// emits an event on the profile when the status changes to a final state.
func (a *Agent) writeStatus(ctx context.Context, p api.Profile, cur *unstructured.Unstructured, s api.Status, msg string) (*unstructured.Unstructured, error) {
	want := p.NewNodeStatus(a.cfg.Node, s, msg)
	c := a.cfg.Dynamic.Resource(api.ProfileNodeStatuses).Namespace(p.Namespace)
	var (
		out      *unstructured.Unstructured
		prev     api.Status
		replaced string
		err      error
	)
	if cur == nil {
		u, cerr := api.ToUnstructured(want)
		if cerr != nil {
			return nil, cerr
		}
		out, err = c.Create(ctx, u, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			if cur, err = c.Get(ctx, want.Name, metav1.GetOptions{}); err != nil {
				return nil, err
			}
		}
	}
	if cur != nil {
		var old api.ProfileNodeStatus
		if err := api.FromUnstructured(cur, &old); err != nil {
			return nil, err
		}
		prev = old.Status
		replaced = cur.GetResourceVersion()
		if old.NodeName != a.cfg.Node {
			return nil, fmt.Errorf("status %s is about node %s, not %s: not touching it", cur.GetName(), old.NodeName, a.cfg.Node)
		}
		if old.Status == s && old.Message == msg && old.ProfileGeneration == p.Generation {
			return cur, nil
		}
		old.Status, old.Message, old.ProfileGeneration = s, msg, p.Generation
		old.Labels = want.Labels
		u, cerr := api.ToUnstructured(&old)
		if cerr != nil {
			return nil, cerr
		}
		out, err = c.Update(ctx, u, metav1.UpdateOptions{})
	}
	if err != nil {
		// Gone or changed meanwhile: forget what this agent wrote, the
		// retry starts from the informer's copy.
		delete(a.written, want.Name)
		return nil, fmt.Errorf("writing status %s of node %s: %w", want.Name, a.cfg.Node, err)
	}
	if out != nil {
		w, ok := a.written[want.Name]
		if !ok || cur == nil || w.obj.GetResourceVersion() != replaced {
			w = writtenStatus{replaced: map[string]bool{}}
		}
		w.replaced[replaced] = true
		w.obj = out
		a.written[want.Name] = w
	}
	a.logf("%s %s/%s: %s %s", p.Kind, p.Namespace, p.Name, s, msg)
	if s != prev && s != api.Pending && s != api.Installing && a.last[want.Name] != s {
		a.last[want.Name] = s
		a.event(ctx, p, s, msg)
	}
	return out, nil
}

// Event reasons.
const (
	ReasonInstalled   = "ProfileInstalled"
	ReasonFailed      = "ProfileInstallFailed"
	ReasonUnsupported = "ProfileUnsupported"
	// ReasonStaticPodWritten: a StaticPod's manifest is in the node's static
	// pod directory (a failure is ReasonFailed).
	ReasonStaticPodWritten = "StaticPodWritten"
)

// event records a node-specific event on the profile, the node named in the
// message (the design note's preference) and in the source host.
func (a *Agent) event(ctx context.Context, p api.Profile, s api.Status, msg string) {
	if a.cfg.Core == nil {
		return
	}
	reason, typ := ReasonInstalled, corev1.EventTypeNormal
	text := fmt.Sprintf("node %s: installed %s", a.cfg.Node, p.LocalhostProfile())
	if p.Kind == api.KindStaticPod {
		reason, text = ReasonStaticPodWritten, fmt.Sprintf("node %s: wrote %s", a.cfg.Node, msg)
	}
	switch s {
	case api.Failed:
		reason, typ = ReasonFailed, corev1.EventTypeWarning
		text = fmt.Sprintf("node %s: %s", a.cfg.Node, msg)
	case api.Unsupported:
		reason, typ = ReasonUnsupported, corev1.EventTypeWarning
		text = fmt.Sprintf("node %s: unsupported: %s", a.cfg.Node, msg)
	}
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: p.Name + ".", Namespace: p.Namespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: api.GroupVersion.String(), Kind: p.Kind, Namespace: p.Namespace, Name: p.Name, UID: types.UID(p.UID),
		},
		Reason: reason, Message: text, Type: typ,
		Source:              corev1.EventSource{Component: "skewproof-agent", Host: a.cfg.Node},
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		ReportingController: "profiles.skewproof.io/agent",
		ReportingInstance:   "skewproof-agent-" + a.cfg.Node,
	}
	if _, err := a.cfg.Core.CoreV1().Events(p.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		a.logf("recording event %s for %s/%s: %v", reason, p.Namespace, p.Name, err)
	}
}

func ownedBy(refs []metav1.OwnerReference, uid string) bool {
	for _, r := range refs {
		if string(r.UID) == uid {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
