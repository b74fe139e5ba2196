// A real Ginkgo suite with one spec that fails on its first attempt and
// passes on the second (a marker file in $FLAKY_DIR tells them apart), one
// that always passes and one that always fails: TestFlakyWithRealGinkgo
// runs it with --flake-attempts=2 and reads Ginkgo's own report.
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

var _ = Describe("flakes", func() {
	It("[seccomp/kubelet/enforce] fails once, then passes", func() {
		marker := filepath.Join(os.Getenv("FLAKY_DIR"), "attempted")
		if _, err := os.Stat(marker); err != nil {
			Expect(os.WriteFile(marker, nil, 0o644)).To(Succeed())
			Fail("first attempt: container never started")
		}
	})
	It("[seccomp/api/types] passes", func() {})
	It("[seccomp/failure/row-4] always fails", func() { Fail("still broken") })
})
