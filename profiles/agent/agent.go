// Package agent is the node agent: one per node (a DaemonSet), it puts every
// SeccompProfile of its namespace under the kubelet's seccomp root, reports
// Unsupported for AppArmorProfiles when the node has no AppArmor, removes
// the files of deleted profiles, and creates and updates the status objects
// of its own node only (spec/004_ef29f3f25d7f54d5.txt: each node's status is
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
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/skewproof/skewproof/profiles/api"
	"github.com/skewproof/skewproof/profiles/internal/kick"
)

// DefaultAppArmorEnabledFile says whether the kernel has AppArmor enabled
// ("Y"); it is absent when the kernel has no AppArmor at all.
const DefaultAppArmorEnabledFile = "/sys/module/apparmor/parameters/enabled"

// Config configures an Agent.
type Config struct {
	Node      string // this node's name (downward API spec.nodeName)
	Namespace string // the namespace of the profiles and their node statuses
	// SeccompRoot is where the kubelet's seccomp root is mounted in the agent
	// (/var/lib/kubelet/seccomp on the node).
	SeccompRoot string
	// AppArmorEnabledFile, DefaultAppArmorEnabledFile when empty.
	AppArmorEnabledFile string
	Dynamic             dynamic.Interface
	Core                kubernetes.Interface // for events
	// Resync is the period of full passes (default 10s); failed installs are
	// retried on each pass.
	Resync time.Duration
	Logf   func(format string, args ...any)
}

// Agent installs the profiles of one namespace on one node.
type Agent struct {
	cfg Config
	mu  sync.Mutex
	// last status reported per node status name, to emit events on change only.
	last map[string]api.Status
}

// New returns an agent; it checks the configuration.
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
	if cfg.Resync == 0 {
		cfg.Resync = 10 * time.Second
	}
	return &Agent{cfg: cfg, last: map[string]api.Status{}}, nil
}

func (a *Agent) logf(format string, args ...any) {
	if a.cfg.Logf != nil {
		a.cfg.Logf(format, args...)
	}
}

// Run syncs on every change of a profile or of this node's statuses, and
// every Resync, until ctx ends. ready is called after the first full sync.
func (a *Agent) Run(ctx context.Context, ready func()) error {
	wake := make(chan struct{}, 1)
	go a.watch(ctx, api.SeccompProfiles, "", wake)
	go a.watch(ctx, api.AppArmorProfiles, "", wake)
	go a.watch(ctx, api.ProfileNodeStatuses, api.NodeSelector(a.cfg.Node), wake)
	t := time.NewTicker(a.cfg.Resync)
	defer t.Stop()
	first := true
	for {
		err := a.Sync(ctx)
		if err != nil && ctx.Err() == nil {
			a.logf("sync: %v", err)
		}
		if first && err == nil {
			first = false
			if ready != nil {
				ready()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(100 * time.Millisecond):
			}
		case <-t.C:
		}
	}
}

func (a *Agent) watch(ctx context.Context, r runtimeGVR, selector string, k chan<- struct{}) {
	kick.Watch(ctx, a.cfg.Dynamic, r, a.cfg.Namespace, selector, k, func(err error) { a.logf("watching %s: %v", r.Resource, err) })
}

// Sync does one full pass: every profile installed (or reported), every
// file of a deleted profile removed.
func (a *Agent) Sync(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	mine, err := a.cfg.Dynamic.Resource(api.ProfileNodeStatuses).Namespace(a.cfg.Namespace).List(ctx,
		metav1.ListOptions{LabelSelector: api.NodeSelector(a.cfg.Node)})
	if err != nil {
		return fmt.Errorf("listing the statuses of node %s: %w", a.cfg.Node, err)
	}
	existing := map[string]*unstructured.Unstructured{}
	for i := range mine.Items {
		existing[mine.Items[i].GetName()] = &mine.Items[i]
	}
	var errs []error
	wantFiles := map[string]bool{}
	for _, kind := range []string{api.KindSeccompProfile, api.KindAppArmorProfile} {
		res, _ := api.Resource(kind)
		l, err := a.cfg.Dynamic.Resource(res).Namespace(a.cfg.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("listing %s: %w", res.Resource, err))
			// Without the list, we cannot know which files are stale.
			wantFiles = nil
			continue
		}
		for i := range l.Items {
			u := &l.Items[i]
			if u.GetDeletionTimestamp() != nil {
				continue
			}
			p, err := api.ProfileFromUnstructured(u)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if kind == api.KindSeccompProfile && wantFiles != nil {
				wantFiles[p.Name+".json"] = true
			}
			if err := a.syncProfile(ctx, p, existing[api.NodeStatusName(p.Name, a.cfg.Node)]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if wantFiles != nil {
		if err := a.removeStale(wantFiles); err != nil {
			errs = append(errs, err)
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
			cur = nil
		}
	}
	// Fast path: already reported for this generation and still true.
	if cur != nil && st.ProfileGeneration == p.Generation {
		switch st.Status {
		case api.Installed:
			if p.Kind == api.KindAppArmorProfile || a.fileIs(p) {
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
	var (
		s   api.Status
		msg string
	)
	switch p.Kind {
	case api.KindSeccompProfile:
		// Installing marks new work (a new profile or generation); a retry
		// after a failure goes straight to its result, so a node that keeps
		// failing does not move back and forth.
		if st.Status == api.Pending || (st.ProfileGeneration != p.Generation && st.Status != api.Installing) {
			updated, err := a.writeStatus(ctx, p, cur, api.Installing, "")
			if err != nil {
				return err
			}
			cur = updated
		}
		s, msg = api.Installed, ""
		if err := a.writeSeccomp(p); err != nil {
			s, msg = api.Failed, err.Error()
		}
	case api.KindAppArmorProfile:
		s, msg = a.loadAppArmor(ctx, p)
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

// removeStale deletes the files of profiles that no longer exist.
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
		if e.IsDir() || want[e.Name()] {
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

// loadAppArmor loads an AppArmor profile where the node has AppArmor.
func (a *Agent) loadAppArmor(ctx context.Context, p api.Profile) (api.Status, string) {
	if ok, why := AppArmorEnabled(a.cfg.AppArmorEnabledFile); !ok {
		return api.Unsupported, why
	}
	parser, err := exec.LookPath("apparmor_parser")
	if err != nil {
		return api.Failed, "AppArmor is enabled but apparmor_parser is not in the agent image"
	}
	cmd := exec.CommandContext(ctx, parser, "--replace")
	cmd.Stdin = strings.NewReader(p.Content)
	if out, err := cmd.CombinedOutput(); err != nil {
		return api.Failed, fmt.Sprintf("apparmor_parser: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return api.Installed, ""
}

// writeStatus creates (cur == nil) or updates this node's status of p, and
// emits an event on the profile when the status changes to a final state.
func (a *Agent) writeStatus(ctx context.Context, p api.Profile, cur *unstructured.Unstructured, s api.Status, msg string) (*unstructured.Unstructured, error) {
	want := p.NewNodeStatus(a.cfg.Node, s, msg)
	c := a.cfg.Dynamic.Resource(api.ProfileNodeStatuses).Namespace(p.Namespace)
	var (
		out  *unstructured.Unstructured
		prev api.Status
		err  error
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
		return nil, fmt.Errorf("writing status %s of node %s: %w", want.Name, a.cfg.Node, err)
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
)

// event records a node-specific event on the profile, the node named in the
// message (the design note's preference) and in the source host.
func (a *Agent) event(ctx context.Context, p api.Profile, s api.Status, msg string) {
	if a.cfg.Core == nil {
		return
	}
	reason, typ := ReasonInstalled, corev1.EventTypeNormal
	text := fmt.Sprintf("node %s: installed %s", a.cfg.Node, p.LocalhostProfile())
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

// Files lists the seccomp files this agent keeps (for tests and diagnostics).
func (a *Agent) Files() ([]string, error) {
	entries, err := os.ReadDir(a.Dir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out, nil
}
