package api

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// KindStaticPod is the kind of StaticPod objects.
const KindStaticPod = "StaticPod"

// StaticPods is the resource of StaticPod objects.
var StaticPods = GroupVersion.WithResource("staticpods")

// StaticPod is a pod manifest that the agent of one node writes into that
// node's static pod directory (the kubelet's staticPodPath) for as long as
// the object exists, so that the kubelet runs it as a static pod. The agent
// reports it with a ProfileNodeStatus (profileKind StaticPod) of that node.
//
// Whoever may create StaticPods in the agent's namespace may run any pod on
// any node, outside admission: grant it like node access.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories=skewproof
// +kubebuilder:metadata:labels="app.kubernetes.io/part-of=skewproof"
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.spec.nodeName`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type StaticPod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec StaticPodSpec `json:"spec"`
}

// StaticPodSpec says which node runs which pod.
//
// +kubebuilder:validation:XValidation:rule="self.nodeName == oldSelf.nodeName",message="nodeName is immutable"
type StaticPodSpec struct {
	// NodeName is the node whose kubelet runs the pod (immutable); that
	// node's agent writes the manifest into its static pod directory.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	NodeName string `json:"nodeName"`
	// Manifest is the pod as the kubelet reads it: a v1 Pod in YAML or JSON.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	Manifest string `json:"manifest"`
}

// StaticPodList is a list of StaticPod.
//
// +kubebuilder:object:root=true
type StaticPodList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StaticPod `json:"items"`
}

// StaticPodFilePrefix starts the name of every manifest file the agent of
// namespace writes: nothing else in the static pod directory is touched.
// Namespace names hold no dot, so the prefixes of two namespaces never
// overlap.
func StaticPodFilePrefix(namespace string) string { return "skewproof." + namespace + "." }

// StaticPodFile is the file name of the StaticPod namespace/name in the
// node's static pod directory.
func StaticPodFile(namespace, name string) string {
	return StaticPodFilePrefix(namespace) + name + ".yaml"
}

// StaticPodObject returns the StaticPod that runs pod on node.
func StaticPodObject(namespace, name, node string, pod *corev1.Pod) (*StaticPod, error) {
	if err := ValidateProfileName(name); err != nil {
		return nil, err
	}
	p := pod.DeepCopy()
	p.APIVersion, p.Kind = "v1", "Pod"
	b, err := yaml.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("static pod %s: %w", name, err)
	}
	return &StaticPod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "skewproof"}},
		Spec:       StaticPodSpec{NodeName: node, Manifest: string(b)},
	}, nil
}

// ParseStaticPodManifest checks that a manifest is a v1 Pod with a name,
// as the kubelet needs it, and returns the pod.
func ParseStaticPodManifest(manifest string) (*corev1.Pod, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal([]byte(manifest), &tm); err != nil {
		return nil, fmt.Errorf("the manifest is not YAML or JSON: %w", err)
	}
	if tm.APIVersion != "v1" || tm.Kind != "Pod" {
		return nil, fmt.Errorf("the manifest is apiVersion %q kind %q, want a v1 Pod", tm.APIVersion, tm.Kind)
	}
	var p corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(manifest), &p); err != nil {
		return nil, fmt.Errorf("the manifest is not a valid Pod: %w", err)
	}
	if strings.TrimSpace(p.Name) == "" {
		return nil, fmt.Errorf("the manifest's pod has no metadata.name")
	}
	return &p, nil
}

// StaticPodFromUnstructured returns what the agent needs of a StaticPod:
// a Profile (Content is the manifest) and the target node.
func StaticPodFromUnstructured(u *unstructured.Unstructured) (Profile, string, error) {
	p := Profile{Kind: KindStaticPod, Namespace: u.GetNamespace(), Name: u.GetName(), UID: string(u.GetUID()), Generation: u.GetGeneration()}
	var sp StaticPod
	if err := FromUnstructured(u, &sp); err != nil {
		return p, "", err
	}
	p.Content = sp.Spec.Manifest
	return p, sp.Spec.NodeName, nil
}

// AgentKinds are the kinds the node agent puts on nodes.
var AgentKinds = []string{KindSeccompProfile, KindAppArmorProfile, KindStaticPod}

// AgentResource is the resource of one of AgentKinds.
func AgentResource(kind string) (schema.GroupVersionResource, bool) {
	if kind == KindStaticPod {
		return StaticPods, true
	}
	return Resource(kind)
}
