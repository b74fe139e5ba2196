package nodeimage

import "github.com/skewproof/skewproof/internal/image"

// iptablesModeWrapper stands for iptables, ip6tables and their -save and
// -restore in kube-proxy's image: it runs the nf_tables variant when the
// kernel has nf_tables and the legacy one otherwise (the User-Mode Linux
// kernel of an AppArmor node has no nf_tables), deciding once per container
// like the iptables-wrapper of upstream's kube-proxy image.
const iptablesModeWrapper = `#!/bin/sh
# written by skewproof: iptables in the mode this kernel supports
name=${0##*/}
fam=${name%%-*}
case "$name" in *-save) op=-save ;; *-restore) op=-restore ;; *) op= ;; esac
f=/tmp/.skewproof-iptables-mode
mode=
[ -f "$f" ] && read -r mode < "$f"
if [ -z "$mode" ]; then
	probe=SKEWPROOF-PROBE-$$
	if /usr/sbin/iptables-nft -w -t mangle -N "$probe" 2>/dev/null; then
		/usr/sbin/iptables-nft -w -t mangle -X "$probe"
		mode=nft
	else
		mode=legacy
	fi
	echo "$mode" > "$f"
fi
exec "/usr/sbin/$fam-$mode$op" "$@"
`

// iptablesWrapperLayer writes the layer that puts iptablesModeWrapper in
// place of the six iptables commands kube-proxy runs.
func iptablesWrapperLayer(dst string) (image.Layer, error) {
	l := image.NewLayer().Data("/usr/sbin/skewproof-iptables-wrapper", []byte(iptablesModeWrapper), 0o755)
	for _, fam := range []string{"iptables", "ip6tables"} {
		for _, op := range []string{"", "-save", "-restore"} {
			l.Symlink("/usr/sbin/"+fam+op, "skewproof-iptables-wrapper")
		}
	}
	return l.WriteTo(dst)
}
