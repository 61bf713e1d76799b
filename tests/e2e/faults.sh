# Fault injection: configurations that fail to compile, crash, hang, compute
# wrong results or leave an element unwritten are each classified, the run
# finishes, and the winner is the fastest correct one.
. "$(dirname "$0")/common.bash"
run_status 0 "$KTUNE" tune tests/data/faulty.c --json --quiet --no-db --timeout 2
out="$TMP/out"
status() { json "$out" "[c['status'] for c in d['configurations'] if c['config']['VARIANT']==$1][0]"; }
expect_eq "$(status 0)" ok "VARIANT=0 (default)"
expect_eq "$(status 1)" compile "VARIANT=1"
expect_eq "$(status 2)" runtime "VARIANT=2 (segfault)"
expect_eq "$(status 3)" timeout "VARIANT=3 (hang)"
expect_eq "$(status 4)" correctness "VARIANT=4 (wrong value)"
expect_eq "$(status 5)" ok "VARIANT=5"
expect_eq "$(status 6)" runtime "VARIANT=6 (abort)"
expect_eq "$(status 7)" correctness "VARIANT=7 (unwritten element)"
expect_eq "$(json "$out" "d['winner']['config']['VARIANT']")" 5 "winner"
expect_contains "$out" "SIGSEGV" "crash reason recorded"
expect_eq "$(json "$out" "'error' in [c for c in d['configurations'] if c['config']['VARIANT']==1][0]['message'].lower()")" True "compiler message kept"
# Why each failed is on its progress line and in the closing table's
# summary, not only in --json: the signal, the first differing element, the
# compiler's error.
run_status 0 "$KTUNE" tune tests/data/faulty.c --no-db --timeout 2
for where in err out; do
  what="progress lines"
  prefix='\] '
  [ $where = out ] && what="closing table" prefix='failed   '
  expect_contains "$TMP/$where" "${prefix}VARIANT=2: runtime: worker crashed: SIGSEGV" "$what: the crash's signal"
  expect_contains "$TMP/$where" "${prefix}VARIANT=1: compile: .*error" "$what: the compiler's error line"
done
expect_contains "$TMP/err" 'VARIANT=4: correctness: y\[7\]: got' "progress line: the first differing element"
expect_contains "$TMP/out" "and 1 more failed" "closing table: the failures beyond the first five are counted"
finish
