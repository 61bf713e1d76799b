#!/bin/sh
# Miss counts of many search variants at once, over every core (the
# misses.sh figures of docs/SEARCH.md for a grid of settings; used on the
# GPU machine's 16 cores, where a grid of a dozen variants over twelve seeds
# takes minutes instead of an hour here):
#   bench/search_trials/grid.sh BINARY VARIANTS "SEEDS" OUTDIR FILES...
# BINARY is a bench/strategies build (a patched one: run.sh's tree, or
# build_replay_tool.sh with CC="cc -static" to carry it to another machine);
# VARIANTS a file of lines "LABEL [VAR=VALUE ...]", the settings of one
# variant each ("default" with none; GRID_BIN=PATH runs another build for
# it, so that variants of several patches share a grid: a relative PATH is
# beside BINARY, as build_all.sh leaves them). Every (variant, seed) pair is one job of
# 50 repeats at 100 evaluations of forest_align (or GRID_STRATEGY) on FILES; OUTDIR gets each
# job's -v lines and summary.txt: per variant and file, the repeats under
# 0.80 of the optimum summed over SEEDS and the mean fraction (with how many
# seeds' jobs finished).
set -eu
[ $# -ge 5 ] || { echo "usage: bench/search_trials/grid.sh BINARY VARIANTS \"SEEDS\" OUTDIR FILES..." >&2; exit 2; }
bin=$1 variants=$2 seeds=$3 out=$4
shift 4
[ -x "$bin" ] || { echo "grid.sh: $bin is not an executable" >&2; exit 2; }
[ -r "$variants" ] || { echo "grid.sh: cannot read $variants" >&2; exit 2; }
mkdir -p "$out"
jobs=$(mktemp)
trap 'rm -f "$jobs"' EXIT
# Seed by seed, so that a grid cut short has as many seeds for every variant.
for s in $seeds; do
  grep -v '^[[:space:]]*\(#\|$\)' "$variants" | while read -r label settings; do
    echo "$label $s${settings:+ $settings}"
  done
done >"$jobs"
# One job: env SETTINGS BINARY ... FILES, its -v lines into OUTDIR/LABEL.SEED.
files="$*"
# With GRID_SECONDS set, jobs still running that many seconds after the start
# are stopped and their lines dropped, so that every count covers whole seeds.
deadline=$(($(date +%s) + ${GRID_SECONDS:-100000000}))
export bin out files deadline
# shellcheck disable=SC2016 # expanded by the job's shell
xargs -P "$(nproc)" -L 1 sh -c '
  label=$1 seed=$2; shift 2
  left=$((deadline - $(date +%s)))
  [ "$left" -gt 1 ] || exit 0
  run=$bin
  for a; do case $a in GRID_BIN=/*) run=${a#GRID_BIN=} ;; GRID_BIN=*) run=$(dirname "$bin")/${a#GRID_BIN=} ;; esac; done
  timeout "$left" env "$@" "$run" -r 50 -s "$seed" -b 100 -S "${GRID_STRATEGY:-forest_align}" -v $files 2>"$out/$label.$seed" >/dev/null ||
    rm -f "$out/$label.$seed"' job <"$jobs"
# Lines "FILE STRATEGY 100: mean M std S min W below0.80 N failed F".
grep -v '^[[:space:]]*\(#\|$\)' "$variants" | cut -d' ' -f1 | while read -r label; do
  cat "$out/$label".* 2>/dev/null | awk -v v="$label" '/ below0\.80 / {f = $1; m[f] += $5; b[f] += $11; n[f]++}
    END {for (f in m) printf "%s %s: mean %.4f, %d repeats under 0.80 (%d seeds)\n", v, f, m[f] / n[f], b[f], n[f]}' | sort
done >"$out/summary.txt"
cat "$out/summary.txt"
