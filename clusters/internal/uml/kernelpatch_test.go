package uml

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The edits apply once each to a file that has their text, and refuse a
// file where the text is missing or twice.
func TestApplyEdits(t *testing.T) {
	src := t.TempDir()
	file := filepath.Join(src, "arch/um/drivers/ubd_kern.c")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	var orig strings.Builder
	for _, e := range ubdDrain {
		orig.WriteString("/* other code */\n" + e.old)
	}
	if err := os.WriteFile(file, []byte(orig.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := applyEdits(src, ubdDrain); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	for _, want := range []string{"spin_lock_irqsave(&ubd_intr_lock, flags);", "static void ubd_drain(struct timer_list *t)", "mod_timer(&ubd_drain_timer, jiffies + HZ);\n\treturn 0;"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("edited file lacks %q", want)
		}
	}
	// Applied twice: the old text is gone, so the second time refuses.
	if err := applyEdits(src, ubdDrain); err == nil || !strings.Contains(err.Error(), "0 times") {
		t.Errorf("edits applied to an edited file: %v", err)
	}
}

// The kernel's cache key follows the edits.
func TestConfigKeyCoversEdits(t *testing.T) {
	k := configKey()
	old := kernelEdits
	t.Cleanup(func() { kernelEdits = old })
	kernelEdits = append([]sourceEdit{}, old...)
	kernelEdits[0].new += " "
	if configKey() == k {
		t.Error("changing an edit keeps the kernel's cache key")
	}
}
