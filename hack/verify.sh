#!/usr/bin/env bash
# Checks that need no cluster: gofmt, go vet, generated files up to date
# (profiles/api, see `make generate`), shellcheck on the shell scripts and
# golangci-lint (.golangci.yml). Runs every check, leaves the work tree as it
# is, and fails when any check failed.
# Usage: hack/verify.sh [CHECK...]   (or `make verify`); CHECK is one of
# gofmt vet generated shellcheck golangci-lint, all of them by default.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
# golangci-lint, pinned; built from the Go module proxy on first use.
GOLANGCI_LINT_VERSION=v2.15.0

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check_gofmt() {
	# Go files in the tree, tracked or not (ignored ones aside), but testdata.
	local f files=() out
	while IFS= read -r f; do
		[[ -f $f && $f != */testdata/* ]] && files+=("$f")
	done < <(git ls-files --cached --others --exclude-standard -- '*.go')
	out=$(gofmt -l "${files[@]}") || return 1
	if [[ -n $out ]]; then
		printf 'not gofmt-ed (run gofmt -w on them):\n%s\n' "$out" >&2
		return 1
	fi
}

check_vet() {
	"$GO" vet ./...
}

check_generated() {
	local stale=0
	make -s generate GENERATE_DIR="$tmp/gen" >/dev/null || return 1
	diff -u profiles/api/zz_generated.deepcopy.go "$tmp/gen/zz_generated.deepcopy.go" || stale=1
	diff -ru profiles/api/crds "$tmp/gen/crds" || stale=1
	if [[ $stale == 1 ]]; then
		echo 'generated files are stale: run make generate and commit the result' >&2
		return 1
	fi
}

check_shellcheck() {
	local scripts=(hack/*.sh .ci/run)
	if ! command -v shellcheck >/dev/null; then
		echo 'shellcheck is not installed: apt-get install shellcheck (make host installs it)' >&2
		return 1
	fi
	shellcheck "${scripts[@]}"
}

check_golangci-lint() {
	"$GO" run "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION" run --allow-parallel-runners ./...
}

checks=("$@")
[[ ${#checks[@]} -gt 0 ]] || checks=(gofmt vet generated shellcheck golangci-lint)
failed=()
for c in "${checks[@]}"; do
	declare -F "check_$c" >/dev/null || { echo "unknown check $c" >&2; exit 2; }
	printf '== %s\n' "$c"
	start=$SECONDS
	if "check_$c"; then
		printf '== %s: ok (%ds)\n' "$c" $((SECONDS - start))
	else
		printf '== %s: FAILED (%ds)\n' "$c" $((SECONDS - start))
		failed+=("$c")
	fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "verify: failed: ${failed[*]}" >&2
	exit 1
fi
echo 'verify: all checks passed'
