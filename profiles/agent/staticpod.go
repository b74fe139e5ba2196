package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skewproof/skewproof/profiles/api"
)

// StaticPods: the agent of the node a StaticPod names writes its manifest
// into the kubelet's static pod directory as api.StaticPodFile (a prefix of
// this namespace's own, so nothing else there is touched), and removes it
// when the object goes. The kubelet then runs the pod and makes its mirror
// pod, which is what the StaticPod's user observes; the agent's status says
// only that the file is there (Installed, the message naming it on the
// node) or why it is not (Failed).

// staticPodFile is the manifest file of a StaticPod in the agent.
func (a *Agent) staticPodFile(name string) string {
	return filepath.Join(a.cfg.StaticPodDir, api.StaticPodFile(a.cfg.Namespace, name))
}

// staticPodNodePath is that file's path on the node.
func (a *Agent) staticPodNodePath(name string) string {
	dir := a.cfg.StaticPodPath
	if dir == "" {
		dir = a.cfg.StaticPodDir
	}
	return filepath.Join(dir, api.StaticPodFile(a.cfg.Namespace, name))
}

func (a *Agent) staticPodFileIs(p api.Profile) bool {
	if a.cfg.StaticPodDir == "" {
		return false
	}
	return fileHolds(a.staticPodFile(p.Name), p.Content)
}

// writeStaticPod writes the manifest atomically: a temporary file whose
// name starts with a dot (the kubelet ignores those), then a rename.
func (a *Agent) writeStaticPod(p api.Profile) (api.Status, string) {
	if a.cfg.StaticPodDir == "" {
		return api.Failed, "this agent is deployed without the node's static pod directory (see 'skewproof profiles deploy --static-pod-path')"
	}
	if err := api.ValidateProfileName(p.Name); err != nil {
		return api.Failed, err.Error()
	}
	if _, err := api.ParseStaticPodManifest(p.Content); err != nil {
		return api.Failed, err.Error()
	}
	if fi, err := os.Stat(a.cfg.StaticPodDir); err != nil || !fi.IsDir() {
		return api.Failed, fmt.Sprintf("the static pod directory %s is not there: %v", a.cfg.StaticPodPath, err)
	}
	if err := writeAtomic(a.staticPodFile(p.Name), api.StaticPodFile(a.cfg.Namespace, p.Name), p.Content, 0o600); err != nil {
		return api.Failed, fmt.Sprintf("writing %s: %v", a.staticPodNodePath(p.Name), err)
	}
	return api.Installed, a.staticPodNodePath(p.Name)
}

// removeStaticPod removes the manifest of a StaticPod that is gone.
func (a *Agent) removeStaticPod(name string) error {
	if a.cfg.StaticPodDir == "" {
		return nil
	}
	err := os.Remove(a.staticPodFile(name))
	switch {
	case err == nil:
		a.logf("removed %s (its StaticPod is gone)", a.staticPodNodePath(name))
	case errors.Is(err, os.ErrNotExist):
		err = nil
	}
	return err
}

// removeStaleStaticPods removes this namespace's manifests (and temporary
// files) whose StaticPods are gone or are not for this node (want holds
// "StaticPod/<name>" of those that are).
func (a *Agent) removeStaleStaticPods(want map[string]bool) error {
	if a.cfg.StaticPodDir == "" {
		return nil
	}
	prefix := api.StaticPodFilePrefix(a.cfg.Namespace)
	return a.removeStaleFiles(a.cfg.StaticPodDir, func(n string) bool {
		if name, ok := strings.CutPrefix(n, prefix); ok && strings.HasSuffix(name, ".yaml") {
			return !want[api.KindStaticPod+"/"+strings.TrimSuffix(name, ".yaml")]
		}
		return strings.HasPrefix(n, "."+prefix) && strings.Contains(n, ".tmp-")
	}, func(n string) string { return filepath.Join(a.cfg.StaticPodPath, n) }, "its StaticPod is gone")
}
