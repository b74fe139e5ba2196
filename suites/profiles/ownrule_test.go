package profiles

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Every stop of a profiles spec goes through the harness's own-cluster
// rule (h.MissingSetUp, h.NodeWithAccess): a direct Ginkgo Skip would be
// green on skewproof's own cluster, where what is missing is its own
// set-up (node access, the agent image, the nodes).
func TestNoDirectSkip(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				if fn.Name == "Skip" {
					t.Errorf("%s: Skip called directly: stop through h.MissingSetUp (the own-cluster rule)", fset.Position(call.Pos()))
				}
			case *ast.SelectorExpr:
				if fn.Sel.Name == "Skip" || fn.Sel.Name == "NeedNodeAccess" {
					if x, ok := fn.X.(*ast.Ident); ok && x.Name != "h" || fn.Sel.Name == "NeedNodeAccess" {
						t.Errorf("%s: %s.%s called: stop through h.MissingSetUp (the own-cluster rule)", fset.Position(call.Pos()), x, fn.Sel.Name)
					}
				}
			}
			return true
		})
	}
}
