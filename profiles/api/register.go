package api

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// AddToScheme registers the API's types.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&SeccompProfile{}, &SeccompProfileList{},
		&AppArmorProfile{}, &AppArmorProfileList{},
		&ProfileNodeStatus{}, &ProfileNodeStatusList{},
		&StaticPod{}, &StaticPodList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// ToUnstructured converts one of the API's objects for a dynamic client and
// sets its apiVersion and kind.
func ToUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(GroupVersion.String())
	switch obj.(type) {
	case *SeccompProfile:
		u.SetKind(KindSeccompProfile)
	case *AppArmorProfile:
		u.SetKind(KindAppArmorProfile)
	case *ProfileNodeStatus:
		u.SetKind(KindProfileNodeStatus)
	case *StaticPod:
		u.SetKind(KindStaticPod)
	default:
		return nil, fmt.Errorf("%T is not a type of %s", obj, GroupVersion)
	}
	return u, nil
}

// FromUnstructured converts an object read with a dynamic client.
func FromUnstructured(u *unstructured.Unstructured, into runtime.Object) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

// Profile is what the agent and the aggregator need of a SeccompProfile or
// an AppArmorProfile.
//
// +kubebuilder:object:generate=false
type Profile struct {
	Kind       string
	Namespace  string
	Name       string
	UID        string
	Generation int64
	// Content is the seccomp JSON or the AppArmor policy.
	Content string
	Status  ProfileStatus
}

// ProfileFromUnstructured reads a SeccompProfile or AppArmorProfile.
func ProfileFromUnstructured(u *unstructured.Unstructured) (Profile, error) {
	p := Profile{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), UID: string(u.GetUID()), Generation: u.GetGeneration()}
	switch u.GetKind() {
	case KindSeccompProfile:
		var sp SeccompProfile
		if err := FromUnstructured(u, &sp); err != nil {
			return p, err
		}
		p.Content, p.Status = sp.Spec.Content, sp.Status
	case KindAppArmorProfile:
		var ap AppArmorProfile
		if err := FromUnstructured(u, &ap); err != nil {
			return p, err
		}
		p.Content, p.Status = ap.Spec.Policy, ap.Status
	default:
		return p, fmt.Errorf("%s/%s: kind %q is not a profile kind", u.GetNamespace(), u.GetName(), u.GetKind())
	}
	return p, nil
}

// LocalhostProfile is what pods put in localhostProfile for p.
func (p Profile) LocalhostProfile() string {
	if p.Kind == KindAppArmorProfile {
		return p.Name
	}
	return SeccompLocalhostProfile(p.Namespace, p.Name)
}

// OwnerReference points a node status at its profile.
func (p Profile) OwnerReference() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: GroupVersion.String(),
		Kind:       p.Kind,
		Name:       p.Name,
		UID:        types.UID(p.UID),
	}
}

// NewNodeStatus is the status object of p on node.
func (p Profile) NewNodeStatus(node string, s Status, msg string) *ProfileNodeStatus {
	return &ProfileNodeStatus{
		TypeMeta: metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: KindProfileNodeStatus},
		ObjectMeta: metav1.ObjectMeta{
			Name:            NodeStatusName(p.Name, node),
			Namespace:       p.Namespace,
			Labels:          NodeStatusLabels(p.Kind, p.Name, node),
			OwnerReferences: []metav1.OwnerReference{p.OwnerReference()},
		},
		NodeName:          node,
		ProfileKind:       p.Kind,
		ProfileName:       p.Name,
		Status:            s,
		Message:           msg,
		ProfileGeneration: p.Generation,
	}
}

// Resource is the resource of a profile kind.
func Resource(kind string) (r schema.GroupVersionResource, ok bool) {
	switch kind {
	case KindSeccompProfile:
		return SeccompProfiles, true
	case KindAppArmorProfile:
		return AppArmorProfiles, true
	}
	return schema.GroupVersionResource{}, false
}
