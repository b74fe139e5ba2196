#!/bin/sh
# skewproof User-Mode Linux node: kind's create-kubelet-cgroup-v2.sh expects
# to be the only user of the root cgroup (in a container); on a booted kernel
# the root cgroup holds kernel threads, so only delegate the controllers.
set -eu
for g in / /kubelet.slice; do
	mkdir -p "/sys/fs/cgroup$g"
	sed -e 's/ / +/g' -e 's/^/+/' < "/sys/fs/cgroup$g/cgroup.controllers" > "/sys/fs/cgroup$g/cgroup.subtree_control"
done
