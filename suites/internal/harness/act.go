package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// Create sends a pod and observes the answer and the stored object.
func (t *Scenario) Create(ctx context.Context, pod *corev1.Pod) observe.Observation {
	t.warn.take()
	p, err := t.Client.CoreV1().Pods(t.NS).Create(ctx, pod, metav1.CreateOptions{})
	return t.ObserveWrite(ctx, p, err)
}

// ObserveWrite observes the answer to a pod write: the rejection, or the
// stored pod read back, and the warnings.
func (t *Scenario) ObserveWrite(ctx context.Context, p *corev1.Pod, err error) observe.Observation {
	o := observe.Observation{Warnings: t.warn.take()}
	if err != nil {
		o.Admission, o.Errors = rejection(err)
		return o
	}
	o.Admission = skew.Accepted
	stored, err := t.Pods().Get(ctx, p.Name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred(), "reading the stored pod back")
	o.Object, err = runtime.DefaultUnstructuredConverter.ToUnstructured(stored)
	Expect(err).NotTo(HaveOccurred())
	return o
}

// rejection is the admission of a write the API server refused; any other
// failure (the API server down, a timeout) fails the spec.
func rejection(err error) (skew.Admission, []string) {
	Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err)).To(BeTrue(),
		"the API server failed for another reason than validation: %v", err)
	return skew.Rejected, []string{err.Error()}
}

// MustCreate creates a pod that the scenario needs to act on.
func (t *Scenario) MustCreate(ctx context.Context, pod *corev1.Pod) observe.Observation {
	o := t.Create(ctx, pod)
	Expect(o.Admission).To(Equal(skew.Accepted), "creating pod %s: %v", pod.Name, o.Errors)
	return o
}

// UpdatePod applies mutate to the current pod and updates it, again on a
// conflict (the scheduler and the kubelet write the pod's status meanwhile).
// Warnings of earlier requests are dropped first.
func (t *Scenario) UpdatePod(ctx context.Context, name string, mutate func(*corev1.Pod)) (*corev1.Pod, error) {
	var out *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := t.Client.CoreV1().Pods(t.NS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(p)
		t.warn.take()
		out, err = t.Client.CoreV1().Pods(t.NS).Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
	return out, err
}

// Change updates a pod with mutate and observes the answer.
func (t *Scenario) Change(ctx context.Context, name string, mutate func(*corev1.Pod)) observe.Observation {
	p, err := t.UpdatePod(ctx, name, mutate)
	return t.ObserveWrite(ctx, p, err)
}

// AddEphemeral adds an ephemeral container through the
// ephemeralcontainers subresource and observes the answer.
func (t *Scenario) AddEphemeral(ctx context.Context, pod string, ec corev1.EphemeralContainer) observe.Observation {
	var p *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := t.Client.CoreV1().Pods(t.NS).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.EphemeralContainers = append(cur.Spec.EphemeralContainers, ec)
		t.warn.take()
		p, err = t.Client.CoreV1().Pods(t.NS).UpdateEphemeralContainers(ctx, pod, cur, metav1.UpdateOptions{})
		return err
	})
	return t.ObserveWrite(ctx, p, err)
}

// CreateWorkload sends a workload and returns what was stored.
func (t *Scenario) CreateWorkload(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	opts := metav1.CreateOptions{}
	c := t.Client
	switch o := obj.(type) {
	case *corev1.PodTemplate:
		return c.CoreV1().PodTemplates(t.NS).Create(ctx, o, opts)
	case *appsv1.Deployment:
		return c.AppsV1().Deployments(t.NS).Create(ctx, o, opts)
	case *appsv1.ReplicaSet:
		return c.AppsV1().ReplicaSets(t.NS).Create(ctx, o, opts)
	case *appsv1.StatefulSet:
		return c.AppsV1().StatefulSets(t.NS).Create(ctx, o, opts)
	case *appsv1.DaemonSet:
		return c.AppsV1().DaemonSets(t.NS).Create(ctx, o, opts)
	case *batchv1.Job:
		return c.BatchV1().Jobs(t.NS).Create(ctx, o, opts)
	case *batchv1.CronJob:
		return c.BatchV1().CronJobs(t.NS).Create(ctx, o, opts)
	}
	return nil, fmt.Errorf("unsupported workload %T", obj)
}

// ObserveWorkload creates a workload and observes the answer: the
// rejection, or its stored pod template seen as a pod, and the warnings.
func (t *Scenario) ObserveWorkload(ctx context.Context, obj runtime.Object) observe.Observation {
	t.warn.take()
	stored, err := t.CreateWorkload(ctx, obj)
	o := observe.Observation{Warnings: t.warn.take()}
	if err != nil {
		o.Admission, o.Errors = rejection(err)
		return o
	}
	o.Admission = skew.Accepted
	st, err := fx.TemplateOf(stored)
	Expect(err).NotTo(HaveOccurred())
	o.Object = templateAsPod(st)
	return o
}

// templateAsPod renders a pod template as a pod (metadata and spec), so the
// oracle's pod field paths apply to it.
func templateAsPod(tmpl *corev1.PodTemplateSpec) map[string]any {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec})
	Expect(err).NotTo(HaveOccurred())
	return u
}

// RePrefix moves the oracle's warnings, stated for a Deployment
// ("spec.template."), to another kind's template path.
func RePrefix(prefix string) func(skew.Observation) skew.Observation {
	return func(o skew.Observation) skew.Observation {
		ws := make([]string, len(o.Warnings))
		for i, w := range o.Warnings {
			ws[i] = prefix + strings.TrimPrefix(w, "spec.template.")
		}
		o.Warnings = ws
		return o
	}
}

// RunOnNode creates a pod pinned to the scenario's node and observes its
// container.
func (t *Scenario) RunOnNode(ctx context.Context, name string, retries bool, opts ...fx.PodOption) observe.Observation {
	obs := t.StartOnNode(ctx, name, opts...)
	obs.Container = t.ObserveContainer(ctx, name, names.ContainerName, retries)
	return obs
}

// StartOnNode creates a pod pinned to the scenario's node without waiting;
// ObserveContainer observes it later, so several pods start together.
func (t *Scenario) StartOnNode(ctx context.Context, name string, opts ...fx.PodOption) observe.Observation {
	return t.MustCreate(ctx, fx.Pod(name, append([]fx.PodOption{fx.OnNode(t.NodeName())}, opts...)...))
}

// ObserveInstantiation creates a ReplicaSet of one replica from tmpl (its
// labels select it) and observes the pod the controller makes of it: the
// template instantiation of KEP-135 and KEP-24 §PodTemplates.
func (t *Scenario) ObserveInstantiation(ctx context.Context, name string, tmpl corev1.PodTemplateSpec) observe.Observation {
	_, err := t.CreateWorkload(ctx, fx.ReplicaSet(name, 1, tmpl))
	Expect(err).NotTo(HaveOccurred(), "creating the ReplicaSet")
	pl, err := e2epod.WaitForPods(ctx, t.F.ClientSet, t.NS, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(tmpl.Labels).String()},
		e2epod.Range{MinFound: 1}, time.Minute, "exist", func(*corev1.Pod) bool { return true })
	Expect(err).NotTo(HaveOccurred(), "waiting for the ReplicaSet's pod")
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&pl.Items[0])
	Expect(err).NotTo(HaveOccurred())
	return observe.Observation{Admission: skew.Accepted, Object: u}
}

// ObserveEphemeral runs target on the scenario's node, adds ec to it once
// it runs, and observes the answer and the ephemeral container.
func (t *Scenario) ObserveEphemeral(ctx context.Context, target *corev1.Pod, ec corev1.EphemeralContainer) observe.Observation {
	target.Spec.NodeName = t.NodeName()
	t.MustCreate(ctx, target)
	app := t.ObserveContainer(ctx, target.Name, names.ContainerName, false)
	Expect(app.State).To(Equal(skew.Running), "the target pod must run first: %s", app)
	obs := t.AddEphemeral(ctx, target.Name, ec)
	Expect(obs.Admission).To(Equal(skew.Accepted), "adding the ephemeral container: %v", obs.Errors)
	obs.Container = t.ObserveContainer(ctx, target.Name, ec.Name, false)
	return obs
}
