// The OpenAPI definitions of releases before v1.24, whose module holds no
// pkg/generated/openapi/zz_generated.openapi.go: upstream's make generated
// it (build/root/Makefile.generated_files, gen_openapi) and did not check it
// in until v1.24, so kube-apiserver does not compile from the module alone
// ("undefined: generatedopenapi.GetOpenAPIDefinitions"). The build
// generates it as that make rule does, into a tree of hard links to the
// module's files that replaces the module (go build takes no -overlay of
// files in the module cache).

package gobuild

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/skewproof/skewproof/clusters/internal/command"
)

const (
	// openAPITree is the directory, in the build module, of the linked tree.
	openAPITree = "kubernetes"
	// openAPIFile is the generated file, relative to k8s.io/kubernetes.
	openAPIFile = "pkg/generated/openapi/zz_generated.openapi.go"
	// openAPIKnownViolations is the release's list of the API rule
	// violations openapi-gen reports; make failed on any difference.
	openAPIKnownViolations = "api/api-rules/violation_exceptions.list"
)

// openAPIExcluded are the staging modules whose packages the make rule left
// out of k8s.io/kubernetes's definitions (KUBE_OPENAPI_TAG_FILES).
var openAPIExcluded = []string{"k8s.io/code-generator", "k8s.io/sample-apiserver"}

// needsOpenAPI reports whether the module in dir (k8s.io/kubernetes) lacks
// its generated OpenAPI definitions.
func needsOpenAPI(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(openAPIFile)))
	return os.IsNotExist(err)
}

var tagLine = regexp.MustCompile(`(?m)^// *\+k8s:`)

// openAPIPackages are the packages of the module at dir (path mod) that ask
// for OpenAPI definitions, as the make rule finds them: every directory
// with a Go file that has a "// +k8s:" comment tag in column 0 and the
// text "+k8s:openapi-gen=" (true or false: openapi-gen reads each type's
// own tags), leaving out top-level directories named _* or .* and vendor
// (hack/make-rules/helpers/cache_go_dirs.sh).
func openAPIPackages(mod, dir string) ([]string, error) {
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && !strings.Contains(rel, "/") && (strings.HasPrefix(rel, "_") || strings.HasPrefix(rel, ".") || rel == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || seen[path.Dir(rel)] {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if tagLine.Match(b) && bytes.Contains(b, []byte("+k8s:openapi-gen=")) {
			seen[path.Dir(rel)] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var pkgs []string
	for _, rel := range slices.Sorted(maps.Keys(seen)) {
		pkgs = append(pkgs, path.Join(mod, rel))
	}
	return pkgs, nil
}

// generateOpenAPI writes k8s.io/kubernetes's definitions into its tree
// kdir (a linkTree of the module). src is the build module, tidied; staging names
// the staging modules (replaces of k8s.io/kubernetes, at their versions).
// openapi-gen is the one of the kube-openapi version the build selects
// (the release's own), run over the release's packages and its staging
// modules' as the make rule did; the API rule violations it reports must
// be the release's known list, as make required.
func generateOpenAPI(ctx context.Context, src, kdir string, env []string, staging map[string]string) error {
	out := filepath.Join(src, "openapi")
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	gen := filepath.Join(out, "openapi-gen")
	if err := command.Run(ctx, src, env, "go", "build", "-o", gen, "k8s.io/kube-openapi/cmd/openapi-gen"); err != nil {
		return fmt.Errorf("building openapi-gen: %w", err)
	}
	pkgs, err := openAPIPackages("k8s.io/kubernetes", kdir)
	if err != nil {
		return err
	}
	var unserved []string
	for _, m := range slices.Sorted(maps.Keys(staging)) {
		if slices.Contains(openAPIExcluded, m) || !strings.HasPrefix(m, "k8s.io/") {
			continue
		}
		dir, err := ModuleDir(ctx, m, strings.Fields(staging[m])[len(strings.Fields(staging[m]))-1])
		if err != nil {
			// Not served (k8s.io/controller-manager v0.19.16, replaced
			// but neither required nor published): no package of the
			// build imports it. Should it have held definitions, the
			// violations check below fails, naming it.
			unserved = append(unserved, m)
			continue
		}
		ps, err := openAPIPackages(m, dir)
		if err != nil {
			return err
		}
		pkgs = append(pkgs, ps...)
	}
	header := filepath.Join(kdir, "hack", "boilerplate", "boilerplate.generatego.txt")
	report := filepath.Join(out, "violations.report")
	if err := command.Run(ctx, src, append(env, "GO111MODULE=on"), gen,
		"-i", strings.Join(pkgs, ","),
		"-p", "k8s.io/kubernetes/pkg/generated/openapi",
		"-O", "zz_generated.openapi",
		"-h", header,
		"-o", out,
		"-r", report); err != nil {
		return fmt.Errorf("openapi-gen: %w", err)
	}
	if err := sameLines(report, filepath.Join(kdir, filepath.FromSlash(openAPIKnownViolations))); err != nil {
		return fmt.Errorf("the generated OpenAPI definitions are not the release's: API rule violations differ from %s (staging modules not served: %v): %w", openAPIKnownViolations, unserved, err)
	}
	return os.Rename(filepath.Join(out, "k8s.io", "kubernetes", filepath.FromSlash(openAPIFile)), filepath.Join(kdir, filepath.FromSlash(openAPIFile)))
}

// linkTree makes dst a tree of directories of hard links to the files of
// src (dst is removed first): a writable copy of a module from the module
// cache that costs no file data.
func linkTree(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return os.Link(p, target)
	})
}

// sameLines reports, as an error, the first line that is in one of the
// files a and b but not in the other (order aside).
func sameLines(a, b string) error {
	la, err := lineSet(a)
	if err != nil {
		return err
	}
	lb, err := lineSet(b)
	if err != nil {
		return err
	}
	for _, l := range slices.Sorted(maps.Keys(la)) {
		if !lb[l] {
			return fmt.Errorf("reported but not known: %q", l)
		}
	}
	for _, l := range slices.Sorted(maps.Keys(lb)) {
		if !la[l] {
			return fmt.Errorf("known but not reported: %q", l)
		}
	}
	return nil
}

func lineSet(file string) (map[string]bool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			set[l] = true
		}
	}
	return set, sc.Err()
}
