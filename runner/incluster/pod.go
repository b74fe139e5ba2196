package incluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// inClusterKubeconfig writes a kubeconfig for the pod's ServiceAccount: it
// names the token and CA files, never their content.
func inClusterKubeconfig() (string, kubernetes.Interface, error) {
	rc, err := rest.InClusterConfig()
	if err != nil {
		return "", nil, fmt.Errorf("not running in a pod with a ServiceAccount: %w", err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "skewproof-kubeconfig-")
	if err != nil {
		return "", nil, err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["in-cluster"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthority: rc.CAFile}
	cfg.AuthInfos["in-cluster"] = &clientcmdapi.AuthInfo{TokenFile: rc.BearerTokenFile}
	cfg.Contexts["in-cluster"] = &clientcmdapi.Context{Cluster: "in-cluster", AuthInfo: "in-cluster"}
	cfg.CurrentContext = "in-cluster"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	return path, cs, os.Chmod(path, 0o600)
}

// ownImage is the image of this container: the pod is found by its name
// (the hostname) in the ServiceAccount's namespace; the container is
// Hydrophone's "conformance-container", Sonobuoy's "plugin", or the only
// one whose image is a skewproof conformance image.
func ownImage(ctx context.Context, cs kubernetes.Interface) (string, error) {
	ns, err := os.ReadFile(filepath.Join(serviceAccountDir, "namespace"))
	if err != nil {
		return "", err
	}
	host, err := os.Hostname()
	if err != nil {
		return "", err
	}
	pod, err := cs.CoreV1().Pods(strings.TrimSpace(string(ns))).Get(ctx, host, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == "conformance-container" || c.Name == "plugin" || strings.Contains(c.Image, ImageName) {
			return c.Image, nil
		}
	}
	return "", fmt.Errorf("pod %s/%s has no conformance container", pod.Namespace, pod.Name)
}
