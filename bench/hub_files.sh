#!/bin/sh
# Copies the benchmark hub's recorded spaces that search may be developed on
# (docs/SEARCH.md, "More hub files") out of a git clone of the hub
# (https://github.com/AutoTuningAssociation/benchmark_hub):
#   bench/hub_files.sh HUB_GIT_DIR DEST_DIR [COMMIT]
# Every T4 results file (`*_T4.json.gz`) under cachefiles/ and
# currently_unused/cachefiles/ at COMMIT (default 8eeb99e, the commit
# docs/SEARCH.md replays) is written to DEST_DIR as KERNEL_GPU.json.gz
# (convolution_milo/A100_T4.json.gz -> convolution_A100.json.gz), except the
# A6000, MI250X and W7800 files: issue 32 keeps those out of development, so
# this script never reads them (bench/heldout.sh is for them, run once).
# Files whose contents the clone lacks (a partial clone) are named and
# skipped. The files docs/SEARCH.md's six development files come from are
# copied too (convolution and dedispersion on the A100, A4000 and W6600).
set -eu
[ $# -ge 2 ] || { echo "usage: bench/hub_files.sh HUB_GIT_DIR DEST_DIR [COMMIT]" >&2; exit 2; }
hub=$1
dest=$2
commit=${3:-8eeb99e}
git -C "$hub" rev-parse --verify -q "$commit^{commit}" >/dev/null 2>&1 ||
  { echo "hub_files: $hub holds no commit $commit (a clone of the benchmark hub?)" >&2; exit 2; }
mkdir -p "$dest"
git -C "$hub" ls-tree -r --name-only "$commit" -- cachefiles currently_unused/cachefiles |
  grep '_T4\.json\.gz$' | grep -v -i -e a6000 -e mi250x -e w7800 | grep -v ' ' |
  while read -r path; do
    name=$(echo "$path" | sed 's#.*cachefiles/##; s#_milo/#/#; s#/#_#; s#_T4\.json\.gz$#.json.gz#')
    if git -C "$hub" cat-file -e "$commit:$path" 2>/dev/null &&
      git -C "$hub" show "$commit:$path" >"$dest/$name.part" 2>/dev/null; then
      mv "$dest/$name.part" "$dest/$name"
      echo "$name <- $path"
    else
      rm -f "$dest/$name.part"
      echo "$name: skipped, the clone lacks $path" >&2
    fi
  done
