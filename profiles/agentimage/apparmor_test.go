package agentimage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewproof/skewproof/internal/cachedir"
)

// A build host without apt/dpkg cannot provide the package: the error says
// so (ErrNoAppArmorPackage), and the agent image is built without the layer.
func TestAppArmorParserLayerWithoutPackageManager(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv(cachedir.Env, t.TempDir())
	_, err := AppArmorParserLayer(context.Background())
	if !errors.Is(err, ErrNoAppArmorPackage) || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("err = %v, want ErrNoAppArmorPackage naming the missing tool", err)
	}
}

// The layer takes apparmor_parser from /usr/sbin or, in older packages,
// /sbin, and only the include directories the package has.
func TestLayerContent(t *testing.T) {
	root := t.TempDir()
	if _, err := layerContent(root); err == nil {
		t.Fatal("a package without apparmor_parser must be an error")
	}
	for _, p := range []string{"sbin/apparmor_parser", "etc/apparmor.d/abi/3.0"} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(root, p), nil, 0o755)
	}
	c, err := layerContent(root)
	if err != nil {
		t.Fatal(err)
	}
	if c.Executables[AppArmorParserInImage] != filepath.Join(root, "sbin", "apparmor_parser") {
		t.Errorf("executables %v", c.Executables)
	}
	if len(c.Trees) != 1 || c.Trees[0] != "/etc/apparmor.d/abi" || c.Root != root {
		t.Errorf("trees %v in %s, want [/etc/apparmor.d/abi]", c.Trees, c.Root)
	}
	if _, ok := c.Data["/etc/apparmor/parser.conf"]; !ok {
		t.Error("no parser.conf")
	}
}
