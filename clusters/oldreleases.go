// What the kubeadm configuration of a cluster changes with the control
// plane's release: kind generates kubeadm's v1beta2 configuration before
// v1.23 and the cgroupfs driver before v1.24
// (sigs.k8s.io/kind/pkg/cluster/internal/kubeadm, Config), and kubelets
// know failCgroupV1 from v1.31 on.

package clusters

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/skewproof/skewproof/skew/release"
)

var (
	// kubeadmV1Beta3 is the first release kind configures with kubeadm's
	// v1beta3 API, the first with InitConfiguration's skipPhases and
	// patches (kind passes --skip-phases=preflight on the command line
	// before it, which leaves no way to skip the CoreDNS add-on).
	kubeadmV1Beta3 = release.Minor{Major: 1, Minor: 23}
	// kindSystemdCgroups is the first release kind configures the kubelet
	// with the systemd cgroup driver; before it kind writes cgroupfs.
	kindSystemdCgroups = release.Minor{Major: 1, Minor: 24}
	// kubeletFailCgroupV1 is the first release whose KubeletConfiguration
	// has failCgroupV1 (kubelets from v1.35 on refuse cgroup v1 unless it
	// is false).
	kubeletFailCgroupV1 = release.Minor{Major: 1, Minor: 31}
	// rootCAPublisherDefault is the first release whose
	// kube-controller-manager publishes the kube-root-ca.crt ConfigMap in
	// every namespace by default (RootCAConfigMap, beta). v1.19 starts the
	// publisher only with BoundServiceAccountTokenVolume
	// (cmd/kube-controller-manager/app/certificates.go,
	// startRootCACertPublisher), and the e2e framework the suites are built
	// with waits for that ConfigMap in each test namespace
	// (test/e2e/framework, WaitForKubeRootCAInNamespace): two minutes, then
	// the spec fails.
	rootCAPublisherDefault = release.Minor{Major: 1, Minor: 20}
)

// minorOf is the minor release of a version such as 1.19.16 or v1.37.2.
func minorOf(v string) (release.Minor, error) {
	pv, err := release.ParseVersion(v)
	if err != nil {
		return release.Minor{}, err
	}
	return release.MinorOf(pv), nil
}

// kubeadmPatches are kind's kubeadm configuration patches of a cluster
// whose control plane is at cp, on a host of cgroup version cgroupVersion,
// and whether the control-plane node needs the kubeadm patches directory
// mounted (controlPlaneProbePatches).
//
//   - controllerManagerPatch: every release (extraArgs is a map in v1beta2
//     and v1beta3; kind converts it for v1beta4).
//   - noCoreDNSPatch and kubeadmPatchesConfig: from v1.23 (v1beta3). Before
//     it the CoreDNS add-on is removed once kubeadm has made it
//     (removeCoreDNS), and the control plane's startup probes are kubeadm's.
//   - cgroupDriver: systemd before v1.24: the node's containerd runs
//     containers with the systemd driver (nodeimage containerdConfig,
//     SystemdCgroup = true), which the kubelet's driver must match; kind
//     writes cgroupfs for those releases.
//   - failCgroupV1: false on a cgroup v1 host, from v1.31: kubeadm of an
//     older release would drop the unknown field anyway.
//   - kube-controller-manager's BoundServiceAccountTokenVolume gate before
//     v1.20 (rootCAPublisherPatch), besides the cluster's gates.
func kubeadmPatches(cp string, cgroupVersion int, gates map[string]bool) (patches []string, mountPatches bool, err error) {
	m, err := minorOf(cp)
	if err != nil {
		return nil, false, err
	}
	patches = []string{controllerManagerPatch}
	if m.Less(rootCAPublisherDefault) {
		patches = append(patches, rootCAPublisherPatch(gates))
	}
	if !m.Less(kubeadmV1Beta3) {
		patches = append(patches, noCoreDNSPatch, kubeadmPatchesConfig)
		mountPatches = true
	}
	var kubelet []string
	if m.Less(kindSystemdCgroups) {
		kubelet = append(kubelet, "cgroupDriver: systemd")
	}
	if cgroupVersion == 1 && !m.Less(kubeletFailCgroupV1) {
		kubelet = append(kubelet, "failCgroupV1: false")
	}
	if len(kubelet) > 0 {
		patches = append(patches, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"+strings.Join(kubelet, "\n")+"\n")
	}
	return patches, mountPatches, nil
}

// keepsCoreDNS reports whether kubeadm of release cp installs its CoreDNS
// add-on whatever skewproof asks (before v1.23, see kubeadmPatches).
func keepsCoreDNS(cp string) (bool, error) {
	m, err := minorOf(cp)
	if err != nil {
		return false, err
	}
	return m.Less(kubeadmV1Beta3), nil
}

// removeCoreDNS deletes the CoreDNS Deployment kubeadm made: its image is
// not in the node images (noCoreDNSPatch says why none is needed), so its
// pods would never become ready.
func removeCoreDNS(ctx context.Context, cs kubernetes.Interface) error {
	err := cs.AppsV1().Deployments("kube-system").Delete(ctx, "coredns", metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting kubeadm's CoreDNS Deployment: %w", err)
	}
	return nil
}

// rootCAPublisherPatch turns BoundServiceAccountTokenVolume on for
// kube-controller-manager alone, so that a v1.19 control plane publishes
// kube-root-ca.crt (rootCAPublisherDefault); the API server keeps the
// gate off (on there it would need the service account issuer flags, which
// kubeadm sets only from v1.20). gates are the cluster's feature gates,
// which kind also sets on kube-controller-manager: the patch replaces
// that flag, so it carries them.
func rootCAPublisherPatch(gates map[string]bool) string {
	all := map[string]bool{}
	for g, on := range gates {
		all[g] = on
	}
	all["BoundServiceAccountTokenVolume"] = true
	var list []string
	for _, g := range slices.Sorted(maps.Keys(all)) {
		list = append(list, fmt.Sprintf("%s=%t", g, all[g]))
	}
	return "kind: ClusterConfiguration\ncontrollerManager:\n  extraArgs:\n    feature-gates: \"" + strings.Join(list, ",") + "\"\n"
}

// needsRootCAPublisher reports whether a control plane at cp publishes
// kube-root-ca.crt only with skewproof's help (rootCAPublisherPatch and
// grantRootCAPublisher; before v1.20).
func needsRootCAPublisher(cp string) (bool, error) {
	m, err := minorOf(cp)
	if err != nil {
		return false, err
	}
	return m.Less(rootCAPublisherDefault), nil
}

// rootCAPublisher is the controller's name (and its service account's).
const rootCAPublisher = "root-ca-cert-publisher"

// grantRootCAPublisher gives the publisher's service account the role a
// v1.20 API server's bootstrap policy gives it
// (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go):
// a v1.19 API server makes that role only with BoundServiceAccountTokenVolume
// on, which is left off there (rootCAPublisherPatch), so the publisher was
// refused ("configmaps is forbidden") until the role exists; it retries.
func grantRootCAPublisher(ctx context.Context, cs kubernetes.Interface) error {
	name := "system:controller:" + rootCAPublisher
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"create", "update"}, APIGroups: []string{""}, Resources: []string{"configmaps"}},
			{Verbs: []string{"create", "update", "patch"}, APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}},
		},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRole %s: %w", name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: metav1.NamespaceSystem, Name: rootCAPublisher}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRoleBinding %s: %w", name, err)
	}
	return nil
}
