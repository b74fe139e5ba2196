package seccomp

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/skew"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// createWorkload sends a workload and returns what was stored.
func (t *scenario) createWorkload(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
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

// templateAsPod renders a pod template as a pod (metadata and spec), so the
// oracle's pod field paths apply to it.
func templateAsPod(tmpl *corev1.PodTemplateSpec) map[string]any {
	u, err := observe.ToUnstructured(&corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec})
	Expect(err).NotTo(HaveOccurred())
	return u
}

// rePrefix moves the oracle's warnings, stated for a Deployment
// ("spec.template."), to another kind's template path.
func rePrefix(prefix string) func(skew.Observation) skew.Observation {
	return func(o skew.Observation) skew.Observation {
		ws := make([]string, len(o.Warnings))
		for i, w := range o.Warnings {
			ws[i] = prefix + strings.TrimPrefix(w, "spec.template.")
		}
		o.Warnings = ws
		return o
	}
}

// KEP §Version Skew Strategy › PodTemplates.
var _ = Describe("[seccomp] pod templates", Label("seccomp", "template"), func() {
	setUp()
	apiRule("seccomp/template/no-sync", func(ctx context.Context, t *scenario) {
		tmpl := fx.Template("nosync", fx.Annotation(skew.SeccompPodAnnotation, "runtime/default"))
		var subs []sub
		for _, w := range fx.InertWorkloads("nosync", tmpl) {
			t.warn.take()
			stored, err := t.createWorkload(ctx, w.Object)
			o := observe.Observation{Warnings: t.warn.take()}
			if err != nil {
				o.Admission, o.Errors = skew.Rejected, []string{err.Error()}
			} else {
				o.Admission = skew.Accepted
				st, err := fx.TemplateOf(stored)
				Expect(err).NotTo(HaveOccurred())
				o.Object = templateAsPod(st)
			}
			subs = append(subs, sub{Name: w.Kind, Obs: o, Want: rePrefix(w.TemplatePrefix)})
		}
		t.judge(subs...)
	})

	apiRule("seccomp/template/instantiation", func(ctx context.Context, t *scenario) {
		tmpl := fx.Template("inst", fx.Unschedulable(), fx.Annotation(skew.SeccompPodAnnotation, "runtime/default"))
		_, err := t.createWorkload(ctx, fx.ReplicaSet("inst", 1, tmpl))
		Expect(err).NotTo(HaveOccurred(), "creating the ReplicaSet")
		pl, err := e2epod.WaitForPods(ctx, t.F.ClientSet, t.NS, metav1.ListOptions{LabelSelector: "skewproof.io/workload=inst"},
			e2epod.Range{MinFound: 1}, time.Minute, "exist", func(*corev1.Pod) bool { return true })
		Expect(err).NotTo(HaveOccurred(), "waiting for the ReplicaSet's pod")
		pod := &pl.Items[0]
		u, err := observe.ToUnstructured(pod)
		Expect(err).NotTo(HaveOccurred())
		t.judge(sub{Name: "pod of a ReplicaSet whose template has only the annotation", Obs: observe.Observation{Admission: skew.Accepted, Object: u}})
	})
})
