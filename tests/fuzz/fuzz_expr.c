/* The expression parser and evaluator: parse, evaluate with a few bound
 * names (values from the input's first bytes), print back, and check that
 * the printed form parses and evaluates to the same result; the parse-time
 * check of constant parts agrees with evaluation when there is no name.
 * Under UBSan any overflow the checked arithmetic misses is a crash. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "lang/expr.h"

static void count_name(void *ud, const char *name, kt__loc at) {
  (void)name, (void)at;
  ++*(int *)ud;
}

static int64_t take(const uint8_t **p, size_t *n) {
  int64_t v = 0;
  size_t k = *n < 8 ? *n : 8;
  memcpy(&v, *p, k);
  *p += k, *n -= k;
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const names[] = {"A", "B", "N", "BLOCK"};
  int64_t values[4];
  values[0] = take(&data, &size);
  values[1] = (int8_t)take(&data, &size); /* small values reach more branches */
  values[2] = 1024, values[3] = 256;
  kt__env env = {names, values, 4, NULL};
  char *text = kt__fuzz_string(data, size);
  kt__diag d;
  kt__source src;
  kt__source_from_string("fuzz", text, &src);
  kt__diag_init(&d, &src);
  kt__expr *e = kt__expr_parse_text(text, (kt__loc){1, 1}, &d);
  if (e) {
    int64_t v = 0, w = 0;
    kt__eval_error ee;
    int rc = kt__expr_eval(e, &env, &v, &ee);
    int names_used = 0;
    kt__expr_visit_names(e, count_name, &names_used);
    int constant_rc = kt__expr_check_constants(e, &ee);
    if (names_used == 0 && constant_rc != rc) abort(); /* a constant fails at parse time exactly when it fails */
    if (constant_rc != 0 && ee.loc.line != 1) abort(); /* and the error has a place */
    kt__sbuf printed = {0};
    kt__expr_print(e, &printed);
    kt__diag d2;
    kt__diag_init(&d2, NULL);
    kt__expr *again = kt__expr_parse_text(printed.s ? printed.s : "", (kt__loc){1, 1}, &d2);
    if (!again) abort(); /* what we print, we must read back */
    int rc2 = kt__expr_eval(again, &env, &w, &ee);
    if (rc != rc2 || (rc == 0 && v != w)) abort();
    kt__expr_free(again);
    kt__diag_free(&d2);
    kt__sbuf_free(&printed);
  }
  kt__expr_free(e);
  kt__diag_free(&d);
  kt__source_free(&src);
  free(text);
  return 0;
}
