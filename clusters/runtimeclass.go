package clusters

import (
	"context"
	"fmt"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/skewproof/skewproof/internal/nodefacts"
)

// createOCIRuntimeClasses creates, in a new cluster, a RuntimeClass for
// each OCI runtime the user provided (UpOptions.OCIRuntimes) that a worker
// runs: named like the runtime, with its runtime handler, scheduled onto
// the nodes labelled with it, so that pods of the user's own can ask for
// it by name as well.
func createOCIRuntimeClasses(ctx context.Context, cs kubernetes.Interface, o UpOptions) error {
	made := map[string]bool{}
	for _, w := range o.workers() {
		name := w.Runtime.OCI
		if _, vendor := o.OCIRuntimes[name]; !vendor || made[name] {
			continue
		}
		made[name] = true
		_, err := cs.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Handler:    name,
			Scheduling: &nodev1.Scheduling{NodeSelector: map[string]string{nodefacts.OCIRuntimeLabel: name}},
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating the RuntimeClass of OCI runtime %s: %w", name, err)
		}
	}
	return nil
}
