package capacity

import (
	"strconv"
	"strings"
	"testing"
)

// Needs on one file system add up; the refusal says what, how much, where
// and what is free, in one line.
func TestCheckDisk(t *testing.T) {
	dir := t.TempDir()
	_, free, ok := statDisk(dir)
	if !ok {
		t.Fatal("no file system for a temporary directory")
	}
	b := Builds{Base: true, NodeImages: []string{"v1.37.2", "v1.37.2-kubelet-v1.33.13"}, Versions: []string{"1.37.2", "1.33.13"}, ControlPlane: []string{"1.37.2"}, Nodes: 2}
	docker, caches := b.need()
	if want := 2*nodeImageGiB + baseImageGiB + 2*nodeGiB; docker != want || caches != sharedGiB+controlPlaneVersionGiB+kubeletVersionGiB {
		t.Fatalf("need() = %.1f, %.1f; want %.1f, %.1f", docker, caches, want, sharedGiB+controlPlaneVersionGiB+kubeletVersionGiB)
	}
	// Each half fits alone; together, on one file system, they do not.
	half := free*0.6 + 0.1
	err := checkDisk([]diskNeed{{dir, "Docker's data", b.dockerWhat(), half}, {dir + "/sub/dir", "Go's build cache", b.cacheWhat(), half}})
	if err == nil {
		t.Fatalf("%.1f GiB twice on a file system with %.1f GiB free was not refused", half, free)
	}
	msg := err.Error()
	for _, want := range []string{"the base image, 2 node image(s), 2 running node(s); compiling Kubernetes 1.37.2, 1.33.13: about", "Docker's data and Go's build cache", "GiB free", "images prune --keep N"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("message is not one line: %q", msg)
	}
	if err := checkDisk([]diskNeed{{dir, "Docker's data", "a", free / 3}, {dir, "Go's build cache", "b", free / 3}}); err != nil {
		t.Errorf("two thirds of the free disk refused: %v", err)
	}
}

func TestBuildsAdd(t *testing.T) {
	var all Builds
	all.Add(Builds{NodeImages: []string{"a", "b"}, Versions: []string{"1.36.3"}, ControlPlane: []string{"1.36.3"}, Nodes: 3}, 3)
	all.Add(Builds{Base: true, NodeImages: []string{"b", "c"}, Versions: []string{"1.36.3", "1.35.4"}, ControlPlane: []string{"1.36.3"}, Nodes: 5}, 5)
	if !all.Base || len(all.NodeImages) != 3 || len(all.Versions) != 2 || len(all.ControlPlane) != 1 || all.Nodes != 5 {
		t.Errorf("merged %+v", all)
	}
	all.Add(Builds{AppArmorDisks: 2}, 1)
	all.Add(Builds{AppArmorDisks: 3}, 1)
	if all.AppArmorDisks != 5 || all.disksWhat() != "5 AppArmor node disk(s)" {
		t.Errorf("AppArmor node disks %d: %q", all.AppArmorDisks, all.disksWhat())
	}
	// One control-plane version and one for a kubelet.
	if _, caches := all.need(); caches != sharedGiB+controlPlaneVersionGiB+kubeletVersionGiB {
		t.Errorf("caches %.1f GiB", caches)
	}
}

// The part every version shares (the standard library, common modules) is
// counted once in a plan of many versions: the history preset from empty
// caches, 11 control-plane versions and 2 kubelet-only ones.
func TestSharedCountedOnce(t *testing.T) {
	var b Builds
	for i := 0; i < 11; i++ {
		v := "1." + strconv.Itoa(20+i) + ".0"
		b.Versions, b.ControlPlane = append(b.Versions, v), append(b.ControlPlane, v)
	}
	b.Versions = append(b.Versions, "1.19.16", "1.25.16")
	if _, caches := b.need(); caches != sharedGiB+11*controlPlaneVersionGiB+2*kubeletVersionGiB {
		t.Errorf("caches %.1f GiB", caches)
	}
	if _, caches := (Builds{}).need(); caches != 0 {
		t.Errorf("nothing to compile: caches %.1f GiB", caches)
	}
}
