#!/bin/sh
# Every strategy on the held-out files, once (docs/SEARCH.md, "Held-out
# files"): bench/heldout.sh gives the default's figures; this gives the
# tables the development files have, for every strategy, over every core:
#   bench/heldout_all.sh STRATEGIES METHODOLOGY DIR REPEATS OUT
# STRATEGIES and METHODOLOGY are builds of bench/strategies.c and
# bench/methodology.c (bench/build_replay_tool.sh; CC="cc -static" to carry
# them to the GPU machine's cores). For every strategy and T4 file of DIR one
# job replays REPEATS repeats (seed 1) at 25..400 evaluations
# (OUT/strategies.STRATEGY.FILE) and one scores it (OUT/methodology.STRATEGY.FILE);
# OUT/tables.md gathers them: the mean fraction of the optimum per budget and
# file, the worst repeat at 100 evaluations, and the autotuning_methodology
# score per file with its mean over the files.
set -eu
[ $# -eq 5 ] || { echo "usage: bench/heldout_all.sh STRATEGIES METHODOLOGY DIR REPEATS OUT" >&2; exit 2; }
strategies=$1 methodology=$2 dir=$3 repeats=$4 out=$5
for b in "$strategies" "$methodology"; do [ -x "$b" ] || { echo "heldout_all.sh: $b is not an executable" >&2; exit 2; }; done
set -- "$dir"/*.json.gz
[ -e "$1" ] || { echo "heldout_all.sh: no T4 results files (*.json.gz) in $dir" >&2; exit 2; }
mkdir -p "$out"
# Every strategy the bench program replays, in its order (as bench/strategies.sh finds them).
names=$("$strategies" -r 1 -b 1 "$1" | sed -n 's/^| \([a-z_]*\) | 1 |.*/\1/p')
[ -n "$names" ] || { echo "heldout_all.sh: $strategies replayed no strategy on $1" >&2; exit 2; }
export strategies methodology repeats out
# shellcheck disable=SC2016 # expanded by the job's shell
for s in $names; do
  for f; do echo "$s $f"; done
done |
  xargs -P "$(nproc)" -L 1 sh -c '
    name=$(basename "$2" .json.gz)
    "$strategies" -r "$repeats" -s 1 -b 25,50,100,200,400 -S "$1" -v "$2" >"$out/strategies.$1.$name" 2>&1
    "$methodology" -r "$repeats" -s 1 -S "$1" "$2" >"$out/methodology.$1.$name" 2>&1' job
# shellcheck disable=SC2086 # one argument per strategy name
python3 - "$out" $names <<'PY' >"$out/tables.md"
import glob, os, re, sys
out, strats = sys.argv[1], sys.argv[2:]
rows, scores, worst, files = {}, {}, {}, []
for p in sorted(glob.glob(os.path.join(out, "strategies.*"))):
    _, strat, name = os.path.basename(p).split(".", 2)
    files.append(name) if name not in files else None
    for line in open(p):  # "| strategy | budget | fraction | ..." rows of bench/strategies.c
        m = re.match(r"\| (\w+) \| (\d+) \| ([0-9.]+) \|", line)
        if m: rows[(strat, int(m.group(2)), name)] = float(m.group(3))
        m = re.match(r"\S+ \w+ 100: mean \S+ std \S+ min (\S+) below0.80 (\d+)", line)  # -v at 100
        if m: worst[(strat, name)] = "%.3f (%s)" % (float(m.group(1)), m.group(2))
for p in sorted(glob.glob(os.path.join(out, "methodology.*"))):
    _, strat, name = os.path.basename(p).split(".", 2)
    for line in open(p):  # "| strategy | score | ... |": the score row of bench/methodology.c
        m = re.match(r"\| %s \| (-?[0-9.]+) \|" % strat, line)
        if m: scores[(strat, name)] = float(m.group(1))
print("| strategy | budget | " + " | ".join(files) + " | mean |")
print("|---|---:|" + "---:|" * (len(files) + 1))
for s in strats:
    for b in (25, 50, 100, 200, 400):
        v = [rows.get((s, b, f)) for f in files]
        if None in v: continue
        print("| %s | %d | %s | **%.3f** |" % (s, b, " | ".join("%.3f" % x for x in v), sum(v) / len(v)))
print()
print("| strategy, 100 evaluations: worst repeat (repeats under 0.80) | " + " | ".join(files) + " |")
print("|---|" + "---:|" * len(files))
for s in strats:
    v = [worst.get((s, f)) for f in files]
    if None not in v: print("| %s | %s |" % (s, " | ".join(v)))
print()
print("| strategy | " + " | ".join(files) + " | mean |")
print("|---|" + "---:|" * (len(files) + 1))
for s in strats:
    v = [scores.get((s, f)) for f in files]
    if None in v: continue
    print("| %s | %s | **%.3f** |" % (s, " | ".join("%.3f" % x for x in v), sum(v) / len(v)))
PY
cat "$out/tables.md"
