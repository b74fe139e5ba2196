package uml

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// sourceEdit replaces one exact piece of a kernel source file.
type sourceEdit struct {
	file, old, new string
}

// ubdDrain makes the disk driver drain its completions once a second as
// well as on its interrupt. Observed on a hung AppArmor node (7.3.4): the
// I/O thread idle in poll, 120 requests in flight, and 64 completions
// (512 bytes) unread in the kernel's end of the driver's socket, whose
// interrupt never came; the file descriptor is registered edge-triggered
// (EPOLLET), so no later interrupt comes either, and every task that
// touches the disk waits for ever (jbd2, systemd-journald: the kernel's
// hung-task reports). Calling the driver's interrupt handler by hand
// (gdb) read them and the node recovered at once. The drain reads the same
// socket under a lock the interrupt handler now takes too, so a lost
// interrupt costs at most a second instead of the node.
var ubdDrain = []sourceEdit{{
	file: "arch/um/drivers/ubd_kern.c",
	old: `static irqreturn_t ubd_intr(int irq, void *dev)
{
	int len, i;

`,
	new: `/* skewproof: serializes the interrupt handler and the drain below. */
static DEFINE_SPINLOCK(ubd_intr_lock);

static irqreturn_t ubd_intr(int irq, void *dev)
{
	unsigned long flags;
	int len, i;

	spin_lock_irqsave(&ubd_intr_lock, flags);
`,
}, {
	file: "arch/um/drivers/ubd_kern.c",
	old: `	if (len < 0 && len != -EAGAIN)
		pr_err("spurious interrupt in %s, err = %d\n", __func__, len);
	return IRQ_HANDLED;
}
`,
	new: `	spin_unlock_irqrestore(&ubd_intr_lock, flags);
	if (len < 0 && len != -EAGAIN)
		pr_err("spurious interrupt in %s, err = %d\n", __func__, len);
	return IRQ_HANDLED;
}

/*
 * skewproof: completions whose interrupt was lost stay unread in the
 * socket for ever (its descriptor is edge-triggered); read them once a
 * second.
 */
static void ubd_drain(struct timer_list *t);
static DEFINE_TIMER(ubd_drain_timer, ubd_drain);

static void ubd_drain(struct timer_list *t)
{
	ubd_intr(UBD_IRQ, NULL);
	mod_timer(&ubd_drain_timer, jiffies + HZ);
}
`,
}, {
	file: "arch/um/drivers/ubd_kern.c",
	old: `	if(err < 0)
		printk(KERN_ERR "um_request_irq failed - errno = %d\n", -err);
	return 0;
}
`,
	new: `	if(err < 0)
		printk(KERN_ERR "um_request_irq failed - errno = %d\n", -err);
	else
		mod_timer(&ubd_drain_timer, jiffies + HZ);
	return 0;
}
`,
}}

// kernelEdits are the changes skewproof makes to the kernel source before
// it builds it; part of the kernel's cache key.
var kernelEdits = ubdDrain

// applyEdits makes each edit in the source tree src. An edit whose old
// text is not in its file exactly once fails: the source changed, and the
// edit must be looked at again.
func applyEdits(src string, edits []sourceEdit) error {
	for i, e := range edits {
		path := filepath.Join(src, e.file)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := strings.Count(string(b), e.old); n != 1 {
			return fmt.Errorf("kernel source edit %d does not apply to %s: its text is there %d times, want once (a new kernel source: look at the edit again)", i+1, e.file, n)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), e.old, e.new, 1)), 0o644); err != nil {
			return err
		}
	}
	return nil
}
