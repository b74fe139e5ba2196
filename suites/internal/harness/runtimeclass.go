package harness

import (
	"context"
	"fmt"
	"strings"

	"github.com/skewproof/skewproof/internal/nodefacts"

	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/reports"
	"github.com/skewproof/skewproof/skew"
	senv "github.com/skewproof/skewproof/suites/env"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// EnsureRuntimeClasses creates the RuntimeClasses of the node images'
// restricted runtime handlers (nodefacts.RestrictedRuntimeHandlers: failure
// row 1 of KEP-135 and KEP-24) that do not exist yet, and returns the
// removal of those it created. The runner creates them before its suite
// processes start, so this only creates them when a suite runs on its own.
// Suites call it from their SetUp.
func EnsureRuntimeClasses(ctx context.Context, family string) (func(context.Context) error, error) {
	created, err := nodefacts.EnsureRestrictedRuntimeClasses(ctx, Env.Client,
		map[string]string{SuiteLabel: family, senv.RunLabel: RunID()})
	return func(ctx context.Context) error { return nodefacts.DeleteRuntimeClasses(ctx, Env.Client, created) }, err
}

// SandboxFailed is the waiting reason ObserveContainer reports for a
// container whose pod sandbox cannot be created because the node's runtime
// has no handler of the pod's RuntimeClass (the kubelet's event reason).
const SandboxFailed = "FailedCreatePodSandBox"

// missingHandlerMessages are how runtimes say that a RuntimeClass names a
// handler they do not have: containerd ("no runtime for \"h\" is
// configured") and CRI-O ("failed to find runtime handler h from runtime
// list").
var missingHandlerMessages = []string{"no runtime for", "failed to find runtime handler"}

// missingHandler returns the kubelet's event saying that the pod's sandbox
// cannot be created for want of its runtime handler, or "".
func (t *Scenario) missingHandler(ctx context.Context, pod string) string {
	el, err := t.F.ClientSet.CoreV1().Events(t.NS).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		return ""
	}
	return missingHandlerEvent(el.Items)
}

// missingHandlerEvent returns the message of the first event that says a
// sandbox could not be created for want of a runtime handler, or "".
func missingHandlerEvent(events []corev1.Event) string {
	for _, e := range events {
		if e.Reason != SandboxFailed {
			continue
		}
		for _, m := range missingHandlerMessages {
			if strings.Contains(e.Message, m) {
				return e.Message
			}
		}
	}
	return ""
}

// RunUnderHandler runs a pod on the scenario's node under the RuntimeClass
// named handler and observes its container. Without such a RuntimeClass in
// the cluster, or such a handler in the node's runtime, the scenario cannot
// be set up: skewproof's own clusters have both (its node images carry the
// handler, the runner creates the RuntimeClass), so there the spec fails;
// on an existing cluster it is skipped, saying what is missing
// (SetUpMissing). Under one of skewproof's restricted handlers
// (nodefacts.RestrictedRuntimeHandlers) the result observes that staging,
// not the runtime's own behaviour: it is marked staged (Staged).
func (t *Scenario) RunUnderHandler(ctx context.Context, name, handler string, retries bool, opts ...fx.PodOption) observe.Observation {
	t.result.Staged = Staged(handler, t.Node, Env.Own)
	err := nodefacts.GetRuntimeClass(ctx, t.F.ClientSet, handler)
	if apierrors.IsNotFound(err) {
		t.SetUpMissing(fmt.Sprintf("this cluster has no RuntimeClass %s (skewproof creates it for the runtime handler its node images carry; on other clusters create the RuntimeClass for a handler of that name)", handler))
	}
	Expect(err).NotTo(HaveOccurred(), "reading RuntimeClass %s", handler)
	obs := t.RunOnNode(ctx, name, retries, append([]fx.PodOption{fx.RuntimeClass(handler)}, opts...)...)
	if c := obs.Container; c != nil && c.State == skew.Waiting && c.Reason == SandboxFailed {
		t.SetUpMissing(fmt.Sprintf("the container runtime of node %s has no handler %s (RuntimeClass %s): %s", t.NodeName(), handler, handler, reports.FirstLine(c.Message)))
	}
	return obs
}

// Staged says what a result observed under runtime handler on node nd
// stands for, when handler is one of skewproof's restricted handlers
// (reports.Result.Staged), else "". On skewproof's own cluster the handler
// is its wrapper around the node's OCI runtime, which deletes the profile's
// field from the OCI spec before that runtime sees it; on an existing
// cluster it is whatever handler of that name the cluster was given to
// stand for a runtime without the support (docs/vendor.md). Either way the
// runtime under test never sees the profile.
func Staged(handler string, nd *Node, own bool) string {
	field, ok := nodefacts.RestrictedHandlerField(handler)
	if !ok {
		return ""
	}
	oci := "the node's OCI runtime"
	if nd != nil && nd.Host.OCIRuntime != "" {
		oci = strings.TrimSpace(nd.Host.OCIRuntime + " " + nd.Host.OCIRuntimeVersion)
	}
	if own {
		return fmt.Sprintf("skewproof's restricted runtime handler %s, which deletes %s from the OCI spec before %s sees it", handler, field, oci)
	}
	return fmt.Sprintf("this cluster's runtime handler %s, set up to stand for a runtime without the support (skewproof's own deletes %s from the OCI spec before the OCI runtime sees it)", handler, field)
}

// sandboxFailure reports a container of a pod with a RuntimeClass whose
// sandbox the node's runtime cannot create for want of the handler.
func (t *Scenario) sandboxFailure(ctx context.Context, p *corev1.Pod, s corev1.ContainerStatus) *observe.Container {
	if p.Spec.RuntimeClassName == nil || s.State.Waiting == nil || s.State.Waiting.Reason != "ContainerCreating" {
		return nil
	}
	if msg := t.missingHandler(ctx, p.Name); msg != "" {
		return &observe.Container{State: skew.Waiting, Reason: SandboxFailed, Message: msg}
	}
	return nil
}
