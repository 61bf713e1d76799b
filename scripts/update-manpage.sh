#!/bin/sh
# Rewrites docs/ktune.1's SYNOPSIS, COMMANDS and OPTIONS (between its BEGIN and
# END lines) with what `ktune help --man` prints: the table of cli/options.c.
# Usage: scripts/update-manpage.sh [KTUNE] (default build/ktune), from the
# repository root.
set -eu
KTUNE=${1:-build/ktune}
PAGE=docs/ktune.1
sections=$(mktemp)
trap 'rm -f "$sections" "$sections.page"' EXIT
"$KTUNE" help --man >"$sections"
awk -v gen="$sections" '
  /^\.\\" BEGIN ktune help --man$/ { print; while ((getline line < gen) > 0) print line; skip = 1; next }
  /^\.\\" END ktune help --man$/ { skip = 0 }
  !skip { print }
' "$PAGE" >"$sections.page"
cat "$sections.page" >"$PAGE"
