#!/usr/bin/env bash
# Observes, on a real cluster, the worst case `skewproof simulate --upgrade
# 1.26.15 1.27.16` names for seccomp (KEP-135 §Version Skew Strategy: the
# API server copied annotations to fields until v1.26; the KEP's kubelet
# fallback to the annotations is what OLD would show):
#
#   1. a cluster at FROM (1.26.15) with a kubelet OLD (1.24.17, the last
#      before the annotations' planned removal from the kubelet) and a
#      kubelet FROM;
#   2. one Deployment per worker whose template has the pod annotation
#      seccomp.security.alpha.kubernetes.io/pod: runtime/default and no field;
#   3. its pods observed: the stored field (the FROM API server's copy), the
#      container's Seccomp mode (/proc/1/status) and whether a syscall the
#      runtime default profile blocks (personality(ADDR_NO_RANDOMIZE), busybox
#      linux64 -R) is blocked;
#   4. the API server replaced in place by TO's (1.27.16): the kube-apiserver
#      static pod's command switched to TO's binary, everything else as
#      kubeadm FROM wrote it (the controller manager, scheduler and etcd stay
#      at FROM, as in a real upgrade's first step);
#   5. the pods observed again, then `kubectl rollout restart` of both
#      Deployments (what any rollout, eviction or node drain does) and the
#      new pods observed.
#
# A kubelet OLD beside a TO API server is three minors apart, outside the
# skew policy of the time (two minors before v1.28): it is there because the
# upgrade's question is what a kubelet that reads only annotations does.
# The observations are written to OUT as a Markdown page.
# Usage: hack/observe-upgrade.sh   (as root; FROM, TO, OLD, NAME, OUT, BIN override)
set -euo pipefail
cd "$(dirname "$0")/.."
FROM=${FROM:-1.26.15}
TO=${TO:-1.27.16}
OLD=${OLD:-1.24.17}
NAME=${NAME:-skewproof-upgrade}
OUT=${OUT:-docs/oracle/upgrade-$FROM-$TO-observed.md}
BIN=${BIN:-bin/skewproof}
CP=$NAME-control-plane
ANN=seccomp.security.alpha.kubernetes.io/pod
# shellcheck source=hack/lib.sh
. hack/lib.sh
with_cluster_cleanup "$BIN" "$NAME"

log() { echo "[$(date +%T)] $*" >&2; }
k() { docker exec "$CP" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@" </dev/null; }
kin() { docker exec -i "$CP" kubectl --kubeconfig /etc/kubernetes/admin.conf "$@"; }

log "building (or finding) the node images: control plane $FROM, kubelets $OLD and $FROM; kube-apiserver $TO"
"$BIN" images build --kubernetes "$TO" >/dev/null
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/skewproof/bin
NEWAPI=$(find "$CACHE" -maxdepth 2 -path "*/k8s.io_kubernetes-v$TO-*/kube-apiserver" -type f 2>/dev/null | head -n 1)
[ -x "$NEWAPI" ] || { echo "observe-upgrade: no kube-apiserver $TO in $CACHE after 'skewproof images build --kubernetes $TO'" >&2; exit 1; }

log "creating cluster $NAME"
"$BIN" cluster up --name "$NAME" --apiserver "$FROM" --kubelets "$OLD,$FROM" >&2

# node of each kubelet version
declare -A NODE
while read -r n v; do NODE[${v#v}]=$n; done < <(k get nodes -l '!node-role.kubernetes.io/control-plane' \
	-o jsonpath='{range .items[*]}{.metadata.name} {.status.nodeInfo.kubeletVersion}{"\n"}{end}')
for v in "$OLD" "$FROM"; do [ -n "${NODE[$v]:-}" ] || { echo "observe-upgrade: no worker with kubelet $v" >&2; exit 1; }; done

deploy() { # name node
	kin apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: $1}}
  template:
    metadata:
      labels: {app: $1}
      annotations: {$ANN: runtime/default}
    spec:
      nodeSelector: {kubernetes.io/hostname: $2}
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: skewproof.local/busybox:1
        imagePullPolicy: Never
        command: [sleep, "3600"]
EOF
}

# observe STEP: one table row per Deployment's running pod
observe() {
	for d in "kubelet-$OLD" "kubelet-$FROM"; do
		k rollout status "deploy/${d//./-}" --timeout=180s >/dev/null
		local pod node kv field ann mode probe n
		# the replaced pod gone, so that the one left is the new one
		for _ in $(seq 1 60); do
			n=$(k get pods -l app="${d//./-}" -o name | wc -l)
			[ "$n" = 1 ] && break
			sleep 1
		done
		pod=$(k get pods -l app="${d//./-}" --field-selector=status.phase=Running -o jsonpath='{.items[0].metadata.name}')
		node=$(k get pod "$pod" -o jsonpath='{.spec.nodeName}')
		kv=$(k get node "$node" -o jsonpath='{.status.nodeInfo.kubeletVersion}')
		field=$(k get pod "$pod" -o jsonpath='{.spec.securityContext.seccompProfile.type}')
		ann=$(k get pod "$pod" -o jsonpath="{.metadata.annotations['${ANN//./\\.}']}")
		mode=$(k exec "$pod" -- sh -c 'grep ^Seccomp: /proc/1/status' | awk '{print $2}')
		if k exec "$pod" -- linux64 -R true >/dev/null 2>&1; then probe="made (not blocked)"; else probe="blocked"; fi
		printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$(k version -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -n 1)" \
			"$kv" "$pod" "${ann:-none}" "${field:-none}" "$mode" "$probe"
	done
}

ROWS=$TMP/rows
log "two Deployments, template annotation $ANN: runtime/default, no field"
deploy "kubelet-${OLD//./-}" "${NODE[$OLD]}"
deploy "kubelet-${FROM//./-}" "${NODE[$FROM]}"
observe "1. created under $FROM" >>"$ROWS"

log "replacing kube-apiserver $FROM by $TO in place"
docker exec "$CP" mkdir -p /upgrade
docker cp "$NEWAPI" "$CP":/upgrade/kube-apiserver
docker cp "$CP":/etc/kubernetes/manifests/kube-apiserver.yaml "$TMP/kube-apiserver.yaml"
python3 - "$TMP/kube-apiserver.yaml" <<'EOF'
import sys
p = sys.argv[1]
s = open(p).read()
# kubeadm writes "    - kube-apiserver" as the command's first element.
assert s.count("    - kube-apiserver\n") == 1, "unexpected kube-apiserver manifest"
s = s.replace("    - kube-apiserver\n", "    - /upgrade/kube-apiserver\n")
s = s.replace("    volumeMounts:\n", "    volumeMounts:\n    - mountPath: /upgrade\n      name: upgrade\n      readOnly: true\n", 1)
s = s.replace("  volumes:\n", "  volumes:\n  - hostPath:\n      path: /upgrade\n      type: Directory\n    name: upgrade\n", 1)
open(p, "w").write(s)
EOF
docker cp "$TMP/kube-apiserver.yaml" "$CP":/etc/kubernetes/manifests/kube-apiserver.yaml
for _ in $(seq 1 120); do
	if k version -o json 2>/dev/null | grep -q "\"gitVersion\": \"v$TO\""; then break; fi
	sleep 2
done
k version -o json | grep -q "\"gitVersion\": \"v$TO\"" || { echo "observe-upgrade: the API server did not come back at v$TO" >&2; exit 1; }
k wait --for=condition=Ready nodes --all --timeout=120s >/dev/null
observe "2. after the API server's upgrade to $TO" >>"$ROWS"

log "rollout restart of both Deployments under $TO"
WARN=$TMP/warnings
for d in "kubelet-${OLD//./-}" "kubelet-${FROM//./-}"; do
	k rollout restart "deploy/$d" 2>>"$WARN" >/dev/null
done
sleep 3
observe "3. pods re-created under $TO (rollout restart)" >>"$ROWS"

{
	echo "# The upgrade from v$FROM to v$TO, observed"
	echo
	echo "Observed on $(date -u +%Y-%m-%d) with \`hack/observe-upgrade.sh\` (control plane v$FROM, workers with kubelets v$OLD and v$FROM; the kube-apiserver then replaced in place by v$TO's). The oracle's answer is [upgrade-$FROM-$TO.md](upgrade-$FROM-$TO.md); the rows \`seccomp/template/instantiation\` and \`seccomp/create/annotation-to-field\` are the ones this shows."
	echo
	echo "Each Deployment's template has the pod annotation \`$ANN: runtime/default\` and no field. \"Seccomp\" is the container's mode (/proc/1/status: 2 is a filter, 0 none); \"blocked\" means personality(ADDR_NO_RANDOMIZE), which the runtime default profile blocks, failed in the container."
	echo
	echo "| step | API server | kubelet | pod | annotation | pod field | Seccomp | personality probe |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
	cat "$ROWS"
	echo
	if [ -s "$WARN" ]; then
		echo "Warnings of the v$TO API server on the rollout restart:"
		echo
		sed 's/^/    /' "$WARN"
	else
		echo "The v$TO API server gave no warning on the rollout restart."
	fi
} >"$OUT"
log "written $OUT"
cat "$OUT"
