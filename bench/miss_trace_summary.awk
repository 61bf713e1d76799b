# Where a blocking miss's time went, from KTUNE_TRACE=1 output (stderr of
# tests/gpu/miss_cuda.c ... tune): each trace line of the first miss, from
# the application's "miss: tuning" to its "miss: configuration loaded in the
# application", as seconds since the miss began and since the line before,
# with the process it came from (app, helper, worker by pid order). Used by
# tests/gpu/miss_h200.sh and bench/miss_cost_h200.sh:
#
#   awk -f bench/miss_trace_summary.awk trace.txt
#   awk -v nth=2 -f bench/miss_trace_summary.awk trace.txt   (the second miss)
BEGIN { if (!nth) nth = 1 }
$1 == "ktune-trace" && !done {
  if (!t0 && $4 == "miss:" && $5 == "tuning" && $6 ~ /[|]/ && ++seen == nth) { t0 = $2; prev = $2; app = $3 }
  if (!t0) next
  who = $3 == app ? "app" : ("pid " $3)
  step = $4
  for (i = 5; i <= NF; i++) step = step " " $i
  if (length(step) > 90) step = substr(step, 1, 87) "..."
  printf "%8.3f s  +%7.3f s  %-10s %s\n", $2 - t0, $2 - prev, who, step
  prev = $2
  if ($3 == app && step ~ /^miss: configuration loaded/) done = 1
}
END { if (!t0) print "no miss in the trace (was KTUNE_TRACE=1 set?)" }
