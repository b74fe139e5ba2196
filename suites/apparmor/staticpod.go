package apparmor

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"

	fx "github.com/skewproof/skewproof/fixtures"
	"github.com/skewproof/skewproof/fixtures/names"
	"github.com/skewproof/skewproof/profiles"
	"github.com/skewproof/skewproof/skew"
	h "github.com/skewproof/skewproof/suites/internal/harness"
	"github.com/skewproof/skewproof/suites/internal/observe"
)

// staticPodPath asks the node's kubelet (its /configz through the API
// server's node proxy) where it reads static pod manifests.
func staticPodPath(ctx context.Context, t *h.Scenario) string {
	b, err := t.F.ClientSet.CoreV1().RESTClient().Get().Resource("nodes").Name(t.NodeName()).SubResource("proxy", "configz").DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred(), "reading the kubelet configuration of %s", t.NodeName())
	var cfg struct {
		KubeletConfig struct {
			StaticPodPath string `json:"staticPodPath"`
		} `json:"kubeletconfig"`
	}
	Expect(json.Unmarshal(b, &cfg)).To(Succeed())
	if cfg.KubeletConfig.StaticPodPath == "" {
		t.SetUpMissing("the kubelet of " + t.NodeName() + " reads no static pod directory (staticPodPath is empty)")
	}
	return cfg.KubeletConfig.StaticPodPath
}

// writeStaticPod has the node agent of the fixtures namespace put a
// manifest into the node's static pod directory (a StaticPod object; the
// agent of that node writes the file and reports it in a node status), and
// removes it when the spec ends. Nothing but the API is needed: the agent
// already runs on every node. Where no agent is ready on the node, or the
// agent writes elsewhere than the kubelet reads, the spec cannot be set up:
// on skewproof's own cluster (the runner deploys the agent with the
// directory kind's kubelets read) that fails the spec, on an existing one
// it is a skip saying why (SetUpMissing).
func writeStaticPod(ctx context.Context, t *h.Scenario, pod *corev1.Pod) {
	dir := staticPodPath(ctx, t)
	c, err := profiles.NewCluster(h.Env.Config, profiles.FixturesNamespace)
	Expect(err).NotTo(HaveOccurred())
	if err := c.AgentReadyOn(ctx, t.NodeName()); err != nil {
		t.SetUpMissing("static pods are written by the node agent: " + err.Error())
	}
	name := "static-" + t.NS
	DeferCleanup(func(ctx SpecContext) {
		Expect(c.DeleteStaticPod(ctx, name)).To(Succeed())
		// The agent removes the manifest; the kubelet then deletes the
		// mirror pod.
		Expect(e2epod.WaitForPodNotFoundInNamespace(ctx, t.F.ClientSet, pod.Name+"-"+t.NodeName(), t.NS, t.NodeWait(time.Minute))).To(Succeed())
	})
	st, err := c.PutStaticPod(ctx, name, t.NodeName(), pod, t.NodeWait(time.Minute))
	Expect(err).NotTo(HaveOccurred(), "writing the static pod manifest through the node agent")
	if written := path.Dir(st.Message); written != path.Clean(dir) {
		t.SetUpMissing(fmt.Sprintf("the agent on %s writes static pods into %s, but its kubelet reads %s: deploy the agent with 'skewproof profiles deploy --static-pod-path %s'",
			t.NodeName(), written, dir, dir))
	}
}

// kubeletPod reads a pod from the kubelet's own pod list (/pods through the
// API server's node proxy); nil when it is not there or cannot be read.
func kubeletPod(ctx context.Context, t *h.Scenario, name string) *corev1.Pod {
	b, err := t.F.ClientSet.CoreV1().RESTClient().Get().Resource("nodes").Name(t.NodeName()).SubResource("proxy", "pods").DoRaw(ctx)
	if err != nil {
		return nil
	}
	var l corev1.PodList
	if json.Unmarshal(b, &l) != nil {
		return nil
	}
	for i := range l.Items {
		if l.Items[i].Name == name && l.Items[i].Namespace == t.NS {
			return &l.Items[i]
		}
	}
	return nil
}

// KEP-24 §Version Skew Strategy › Kubelet fallback; §Removing annotation
// support (Phase 3).
var _ = Describe("[apparmor] static pods", Label("apparmor", "static-pod"), func() {
	h.SetUp(family)
	h.KubeletRule("apparmor/static-pod/annotation-copy", func(ctx context.Context, t *h.Scenario) {
		static := fx.StaticPod("static", t.NS, fx.Annotation(ctrAnn, "localhost/"+profile))
		writeStaticPod(ctx, t, static)
		mirror := static.Name + "-" + t.NodeName()
		obs := observe.Observation{Admission: skew.Accepted}
		// The kubelet creates the mirror pod once it runs the static pod; a
		// static pod its admission rejects gets no mirror pod, only the
		// kubelet's event on the static pod (pkg/kubelet/kubelet.go, rejectPod).
		var rejected *corev1.Event
		var viaKubelet *corev1.Pod
		Eventually(ctx, func() error {
			if p, err := t.F.ClientSet.CoreV1().Pods(t.NS).Get(ctx, mirror, metav1.GetOptions{}); err == nil {
				obs.Object, err = runtime.DefaultUnstructuredConverter.ToUnstructured(p)
				return err
			}
			el, err := t.F.ClientSet.CoreV1().Events(t.NS).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + mirror})
			if err != nil {
				return err
			}
			for i, e := range el.Items {
				if e.Type == corev1.EventTypeWarning && e.Source.Component == "kubelet" {
					rejected = &el.Items[i]
					return nil
				}
			}
			// A static pod the kubelet's soft admission blocks (v1.30 and
			// before) gets neither: its status is in the kubelet's own pod
			// list (GetPods adds static pods' status from the status manager).
			if kp := kubeletPod(ctx, t, mirror); kp != nil && kp.Status.Reason != "" {
				viaKubelet = kp
				return nil
			}
			return fmt.Errorf("neither the mirror pod %s, a kubelet warning event for it, nor a reason in the kubelet's pod list", mirror)
		}).WithTimeout(h.PodTimeout).WithPolling(time.Second).Should(Succeed(), "what the kubelet made of static pod %s", mirror)
		switch {
		case viaKubelet != nil:
			obs.Container = &observe.Container{State: skew.RejectedByKubelet, Reason: viaKubelet.Status.Reason, Message: viaKubelet.Status.Message,
				Behaviour: "no mirror pod; status from the kubelet's pod list"}
			if cs, ok := h.PodStatus(viaKubelet, names.ContainerName); ok && cs.State.Waiting != nil && cs.State.Waiting.Reason == "Blocked" {
				obs.Container.State = skew.Blocked
			}
		case rejected != nil:
			obs.Container = &observe.Container{State: skew.RejectedByKubelet, Reason: rejected.Reason, Message: rejected.Message,
				Behaviour: "no mirror pod: rejected by the kubelet's admission (its event)"}
		default:
			obs.Container = t.ObserveContainer(ctx, mirror, names.ContainerName, false)
			// Which component wrote what: the manifest holds only the
			// annotation; a container field on the mirror pod was added by
			// the API server's create strategy (the kubelet sends the
			// manifest as is).
			if _, ok := observe.Lookup(obs.Object, skew.ContainerAppArmorType); ok {
				obs.Container.Behaviour = "mirror pod: container field set by the API server's create strategy from the annotation"
			} else {
				obs.Container.Behaviour = "mirror pod: no container field (annotation only)"
			}
		}
		t.Judge(h.Sub{Name: "static pod with annotation localhost/<p>", Obs: obs, Want: containerOnly})
	})
})
