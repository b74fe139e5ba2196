// A real Ginkgo suite run with --flake-attempts=2 by TestFlakyWithRealGinkgo,
// which reads Ginkgo's own report. Marker files in $FLAKY_DIR tell a spec's
// attempts apart. Specs that judge record their verdict as the suites do
// (a "skewproof" report entry), one spec returns without doing so.
package flakysuite

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestFlaky(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "flaky")
}

// verdict records a spec's verdict the way the suites' harness does.
func verdict(v string) {
	AddReportEntry("skewproof", `{"verdict":"`+v+`"}`, ReportEntryVisibilityNever)
}

// firstAttempt says whether this is the spec's first attempt.
func firstAttempt(name string) bool {
	marker := filepath.Join(os.Getenv("FLAKY_DIR"), name)
	if _, err := os.Stat(marker); err == nil {
		return false
	}
	Expect(os.WriteFile(marker, nil, 0o644)).To(Succeed())
	return true
}

var _ = Describe("flakes", func() {
	It("[seccomp/kubelet/enforce] fails once, then passes", func() {
		if firstAttempt("enforce") {
			verdict("fail")
			Fail("first attempt: container never started")
		}
		verdict("pass")
	})
	It("[seccomp/api/types] passes", func() { verdict("pass") })
	It("[seccomp/failure/row-4] always fails", func() { verdict("fail"); Fail("still broken") })
	It("[seccomp/kubelet/localhost] fails once, then is skipped", func() {
		if firstAttempt("localhost") {
			verdict("fail")
			Fail("first attempt: mkdir: ok")
		}
		verdict("skip")
		Skip("node went away")
	})
	It("[seccomp/kubelet/precedence] returns without a verdict", func() {})
})
