#!/bin/sh
# skewproof User-Mode Linux node: runs the commands the host puts into its
# exec directory (a hostfs mount of the node's state directory): ID.sh with
# ID.in as standard input; writes ID.out, ID.err and, last, ID.rc. This is
# the node's "docker exec" (loading images, reading files).
set -u
arg() { tr ' ' '\n' < /proc/cmdline | sed -n "s/^skewproof\.$1=//p" | tail -1; }
d=/run/skewproof-exec
mkdir -p "$d"
# hostfs takes its host directory as "hostfs=DIR" since it moved to the new
# mount API (mount(8) then passes options one by one), as the bare option
# before.
mount -t hostfs none "$d" -o "hostfs=$(arg exec)" 2>/dev/null || mount -t hostfs none "$d" -o "$(arg exec)" || exit 1
cd "$d" || exit 1
while :; do
	for f in *.sh; do
		[ -e "$f" ] || continue
		id=${f%.sh}
		mv "$f" "$id.run" || continue
		in=/dev/null
		[ -e "$id.in" ] && in=$id.in
		(sh "$id.run" < "$in" > "$id.out" 2> "$id.err"; echo $? > "$id.rc.tmp"; mv "$id.rc.tmp" "$id.rc") &
	done
	sleep 1
done
