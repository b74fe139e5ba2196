package runner

import (
	"context"
	"strings"
	"time"

	"github.com/skewproof/skewproof/internal/nodefacts"
	"github.com/skewproof/skewproof/internal/progress"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	senv "github.com/skewproof/skewproof/suites/env"
)

// deleteRunNamespaces removes namespaces a suite run left behind on an
// existing cluster (the suites remove their own; this covers a crash) and
// waits until they are gone.
func deleteRunNamespaces(c *cluster, runID string, p *progress.Progress) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sel := metav1.ListOptions{LabelSelector: senv.RunLabel + "=" + runID}
	nl, err := c.cs.CoreV1().Namespaces().List(ctx, sel)
	if err != nil {
		return
	}
	for _, ns := range nl.Items {
		if ns.DeletionTimestamp == nil {
			p.Step("deleting leftover namespace %s", ns.Name)
			_ = c.cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		}
	}
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		nl, err := c.cs.CoreV1().Namespaces().List(ctx, sel)
		return err == nil && len(nl.Items) == 0, nil
	})
	if err != nil {
		p.Step("namespaces labelled %s=%s are still terminating", senv.RunLabel, runID)
	}
}

// ensureRuntimeClasses creates the RuntimeClasses of the node images'
// restricted runtime handlers (failure row 1 of both KEPs) that do not
// exist yet and returns those it created.
func ensureRuntimeClasses(ctx context.Context, c *cluster, runID string) ([]string, error) {
	return nodefacts.EnsureRestrictedRuntimeClasses(ctx, c.cs, map[string]string{senv.RunLabel: runID})
}

func deleteRuntimeClasses(c *cluster, names []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = nodefacts.DeleteRuntimeClasses(ctx, c.cs, names)
}

// reportOtherRuns names what other runs left on an existing cluster —
// namespaces labelled with their run — with the command that removes it: a killed run (SIGKILL) could not clean up. One that is
// still running elsewhere has such objects too, hence "unless".
func reportOtherRuns(ctx context.Context, c *cluster, p *progress.Progress) {
	sel := metav1.ListOptions{LabelSelector: senv.RunLabel}
	var found []string
	if nl, err := c.cs.CoreV1().Namespaces().List(ctx, sel); err == nil {
		for _, ns := range nl.Items {
			if ns.DeletionTimestamp == nil {
				found = append(found, "namespace "+ns.Name)
			}
		}
	}
	if len(found) > 0 {
		p.Step("left by another run (killed, unless one is running now): %s; remove them with 'kubectl delete namespace -l %s'",
			strings.Join(found, ", "), senv.RunLabel)
	}
}
