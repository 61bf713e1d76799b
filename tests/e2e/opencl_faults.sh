# Fault injection on the OpenCL backend: configurations that fail to build,
# exceed the work-group or local-memory limit, compute wrong results, leave an
# element unwritten, crash the worker or hang are each classified with their
# reason, and the winner is the fastest correct one.
. "$(dirname "$0")/common.bash"
run_status 0 "$KTUNE" tune tests/data/opencl_faulty.cl --json --quiet --no-db --timeout 10
out="$TMP/out"
config() { json "$out" "[c for c in d['configurations'] if c['config']['VARIANT']==$1][0]$2"; }
expect_eq "$(config 0 "['status']")" ok "VARIANT=0 (default)"
expect_eq "$(config 1 "['status']")" compile "VARIANT=1 (build failure)"
expect_eq "$(config 2 "['status']")" constraint "VARIANT=2 (work-group too large)"
expect_eq "$(config 3 "['status']")" correctness "VARIANT=3 (wrong value)"
expect_eq "$(config 4 "['status']")" ok "VARIANT=4"
expect_eq "$(config 5 "['status']")" correctness "VARIANT=5 (unwritten element)"
expect_eq "$(config 6 "['status']")" constraint "VARIANT=6 (local memory)"
expect_eq "$(config 7 "['status']")" runtime "VARIANT=7 (out-of-bounds write)"
expect_eq "$(config 8 "['status']")" timeout "VARIANT=8 (hang)"
expect_eq "$(json "$out" "d['winner']['config']['VARIANT']")" 4 "winner"
expect_eq "$(config 1 "['message'].find('undeclared identifier') >= 0")" True "build log kept"
expect_eq "$(config 2 "['message'].find('8192') >= 0")" True "work-group size named"
expect_eq "$(config 6 "['message'].find('local memory') >= 0")" True "local memory reason"
finish
