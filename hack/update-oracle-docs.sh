#!/usr/bin/env bash
# Regenerates the pages of docs/oracle that are command output (checked by
# cmd/skewproof TestOracleDocsAreCurrent). deviations.md keeps its written
# findings above the generated table.
set -euo pipefail
cd "$(dirname "$0")/.."
sp() { go run ./cmd/skewproof "$@"; }
sp simulate --apiserver 1.33.13 --kubelet 1.33.13 --format markdown >docs/oracle/simulate-1.33.13-1.33.13.md
sp simulate --apiserver 1.34.4 --kubelet 1.31.14 --format markdown >docs/oracle/simulate-1.34.4-1.31.14.md
sp simulate --apiserver 1.37.2 --kubelet 1.34.4 --format markdown >docs/oracle/simulate-1.37.2-1.34.4.md
sp simulate --upgrade 1.33.13 1.37.2 --format markdown >docs/oracle/upgrade-1.33.13-1.37.2.md
gen=$(sp simulate --deviations 1.29..1.37 --format markdown)
marker=$(printf '%s\n' "$gen" | head -1)
page=docs/oracle/deviations.md
{ sed -n "/^$(printf '%s' "$marker" | sed 's/[]\/$*.^[]/\\&/g')\$/q;p" "$page"; printf '%s\n' "$gen"; } >"$page.new"
mv "$page.new" "$page"
