// Package api holds the profiles.skewproof.io/v1alpha1 API: seccomp and
// AppArmor profile objects whose content a node agent puts on every node, and
// the per-node status objects of the security-profiles-operator "scalable
// status" design (the security-profiles-operator scalable-status design).
//
// Every object is namespaced. A ProfileNodeStatus lives in the namespace of
// its profile, is named <profile>-<node> (see NodeStatusName), is labelled
// with the profile's name, kind and node, and carries an owner reference to
// the profile, so the garbage collector deletes it with the profile. Each
// node status is written by the agent of that node alone; the profile's own
// status holds the aggregate (the lowest common status of its nodes, see
// package profiles/status), written by one aggregator.
//
// zz_generated.deepcopy.go and the CRDs in crds/ are generated from the
// types and their +kubebuilder markers by `make generate` (controller-gen);
// edit the types, not the generated files.
//
// +kubebuilder:object:generate=true
// +groupName=profiles.skewproof.io
// +versionName=v1alpha1
package api

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group and Version of this API.
const (
	Group   = "profiles.skewproof.io"
	Version = "v1alpha1"
)

// GroupVersion is the API's group and version.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// Kinds and resources.
const (
	KindSeccompProfile    = "SeccompProfile"
	KindAppArmorProfile   = "AppArmorProfile"
	KindProfileNodeStatus = "ProfileNodeStatus"
)

var (
	// SeccompProfiles is the resource of SeccompProfile objects.
	SeccompProfiles = GroupVersion.WithResource("seccompprofiles")
	// AppArmorProfiles is the resource of AppArmorProfile objects.
	AppArmorProfiles = GroupVersion.WithResource("apparmorprofiles")
	// ProfileNodeStatuses is the resource of ProfileNodeStatus objects.
	ProfileNodeStatuses = GroupVersion.WithResource("profilenodestatuses")
)

// Labels on every ProfileNodeStatus; listing the node statuses of one
// profile is a label-selector list (see ProfileSelector).
const (
	LabelProfile = Group + "/profile" // the profile's name (or a hash, see LabelValue)
	LabelKind    = Group + "/kind"    // "SeccompProfile" or "AppArmorProfile"
	LabelNode    = Group + "/node"    // the node's name (or a hash, see LabelValue)
)

// SeccompDir is the directory under the kubelet's seccomp root that holds
// the files of SeccompProfile objects: <root>/<SeccompDir>/<namespace>/<name>.json.
const SeccompDir = "skewproof-profiles"

// Status is the state of a profile on one node, or the aggregate over nodes.
// +kubebuilder:validation:Enum=Failed;Unsupported;Pending;Installing;Installed
type Status string

// The statuses, from the one that dominates an aggregate to the one that
// needs every node to agree (see Rank).
const (
	// Failed: the agent could not install (or remove) the profile on the node.
	Failed Status = "Failed"
	// Unsupported: the node cannot enforce this profile type (e.g. no AppArmor).
	Unsupported Status = "Unsupported"
	// Pending: the node has not started on the profile (or has no status yet).
	Pending Status = "Pending"
	// Installing: the agent is writing or loading the profile.
	Installing Status = "Installing"
	// Installed: the profile is on the node and usable by pods.
	Installed Status = "Installed"
)

// Statuses lists every status in rank order.
var Statuses = []Status{Failed, Unsupported, Pending, Installing, Installed}

// Rank orders statuses: the aggregate of several statuses is the one of
// lowest rank. Failed and Unsupported rank lowest, so one such node
// determines the aggregate; an unknown status ranks like Pending.
func (s Status) Rank() int {
	switch s {
	case Failed:
		return 0
	case Unsupported:
		return 1
	case Installing:
		return 3
	case Installed:
		return 4
	default:
		return 2
	}
}

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if s == v {
			return true
		}
	}
	return false
}

// SeccompProfile is a seccomp profile (the JSON the container runtime reads)
// that the agent writes on every node.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories=skewproof
// +kubebuilder:metadata:labels="app.kubernetes.io/part-of=skewproof"
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.status`
// +kubebuilder:printcolumn:name="LocalhostProfile",type=string,JSONPath=`.status.localhostProfile`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type SeccompProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SeccompProfileSpec `json:"spec"`
	Status ProfileStatus      `json:"status,omitempty"`
}

// SeccompProfileSpec is the content of a seccomp profile.
type SeccompProfileSpec struct {
	// Content is the profile as the runtime reads it (JSON, e.g.
	// {"defaultAction":"SCMP_ACT_ALLOW","syscalls":[...]}).
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=262144
	Content string `json:"content"`
}

// SeccompProfileList is a list of SeccompProfile.
//
// +kubebuilder:object:root=true
type SeccompProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SeccompProfile `json:"items"`
}

// AppArmorProfile is an AppArmor policy the agent loads on every node that
// has AppArmor; nodes without it report Unsupported.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories=skewproof
// +kubebuilder:metadata:labels="app.kubernetes.io/part-of=skewproof"
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.status`
// +kubebuilder:printcolumn:name="LocalhostProfile",type=string,JSONPath=`.status.localhostProfile`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AppArmorProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AppArmorProfileSpec `json:"spec"`
	Status ProfileStatus       `json:"status,omitempty"`
}

// AppArmorProfileSpec is the content of an AppArmor profile.
type AppArmorProfileSpec struct {
	// Policy is the profile text for apparmor_parser; it must define the
	// profile named by the object's name (the localhostProfile of pods).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	Policy string `json:"policy"`
}

// AppArmorProfileList is a list of AppArmorProfile.
//
// +kubebuilder:object:root=true
type AppArmorProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AppArmorProfile `json:"items"`
}

// ProfileStatus is the aggregated status of a profile over its nodes.
type ProfileStatus struct {
	// Status is the lowest common status of the profile's node statuses.
	Status Status `json:"status,omitempty"`
	// LocalhostProfile is what pods put in localhostProfile: the path
	// relative to the kubelet seccomp root, or the AppArmor profile name.
	LocalhostProfile string `json:"localhostProfile,omitempty"`
	// Nodes counts the expected nodes by status.
	Nodes map[Status]int32 `json:"nodes,omitempty"`
	// NotReady names up to MaxNotReady (10) nodes that are not Installed,
	// the ones of lowest rank first.
	// +kubebuilder:validation:MaxItems=10
	NotReady []string `json:"notReady,omitempty"`
	// ObservedGeneration is the profile generation the aggregate was made for.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// MaxNotReady bounds ProfileStatus.NotReady, so a profile's size does not
// grow with the node count.
const MaxNotReady = 10

// ProfileNodeStatus is the status of one profile on one node.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,categories=skewproof,shortName=pns
// +kubebuilder:metadata:labels="app.kubernetes.io/part-of=skewproof"
// +kubebuilder:printcolumn:name="Profile",type=string,JSONPath=`.profileName`
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.nodeName`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.nodeName) || self.nodeName == oldSelf.nodeName",message="nodeName is immutable"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.profileName) || self.profileName == oldSelf.profileName",message="profileName is immutable"
type ProfileNodeStatus struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// NodeName is the node this status is about (immutable).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	NodeName string `json:"nodeName"`
	// ProfileKind is the kind of the profile, or StaticPod.
	// +kubebuilder:validation:Enum=SeccompProfile;AppArmorProfile;StaticPod
	ProfileKind string `json:"profileKind"`
	// ProfileName names the profile (or StaticPod) in the same namespace
	// (immutable).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ProfileName string `json:"profileName"`
	// Status on that node.
	Status Status `json:"status,omitempty"`
	// Message says why, for Failed and Unsupported.
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`
	// ProfileGeneration is the profile generation the status is for.
	ProfileGeneration int64 `json:"profileGeneration,omitempty"`
}

// ProfileNodeStatusList is a list of ProfileNodeStatus.
//
// +kubebuilder:object:root=true
type ProfileNodeStatusList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProfileNodeStatus `json:"items"`
}
