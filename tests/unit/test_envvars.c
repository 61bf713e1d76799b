/* The environment's one table (src/envvars.c): each kind's reading, its
 * limits and message, the context refusing a bad value of any row, and no
 * other file of src/ reading the environment. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envvars.h"
#include "handles/context.h"

/* Resolves the table with NAME=VALUE set; the message when refused, else "". */
static const char *resolve_with(const char *name, const char *value, kt__envvars *out) {
  static char msg[1024];
  msg[0] = 0;
  setenv(name, value, 1);
  bool ok = kt__envvars_resolve(out, msg, sizeof msg);
  unsetenv(name);
  return ok ? "" : msg;
}

TEST(seconds_bytes_and_words_read_by_their_kind) {
  kt__envvars e;
  ASSERT_STREQ(resolve_with("KTUNE_RUN_TIMEOUT", "2.5", &e), "");
  ASSERT_TRUE(e.v[KT__ENV_RUN_TIMEOUT].set);
  ASSERT_NEAR(e.v[KT__ENV_RUN_TIMEOUT].seconds, 2.5, 1e-12);
  kt__envvars_free(&e);
  ASSERT_STREQ(resolve_with("KTUNE_BINARY_CACHE_MAX", "512M", &e), "");
  ASSERT_EQ(e.v[KT__ENV_BINARY_CACHE_MAX].bytes, 512ull << 20);
  kt__envvars_free(&e);
  ASSERT_STREQ(resolve_with("KTUNE_ZYGOTE", "spawn", &e), "");
  ASSERT_EQ(e.v[KT__ENV_ZYGOTE].choice, KT__ZYGOTE_SPAWN);
  kt__envvars_free(&e);
  ASSERT_STREQ(resolve_with("KTUNE_DB", "/tmp/x.db", &e), "");
  ASSERT_STREQ(e.v[KT__ENV_DB].text, "/tmp/x.db");
  kt__envvars_free(&e);
}

TEST(unset_rows_hold_their_defaults) {
  kt__envvars e;
  ASSERT_STREQ(resolve_with("KTUNE_UNRELATED", "1", &e), "");
  ASSERT_FALSE(e.v[KT__ENV_HELPER_IDLE_S].set);
  ASSERT_NEAR(e.v[KT__ENV_HELPER_IDLE_S].seconds, 5, 1e-12);
  ASSERT_EQ(e.v[KT__ENV_ZYGOTE].choice, KT__ZYGOTE_AUTO);
  ASSERT_EQ(e.v[KT__ENV_VERIFY_ON].choice, KT__VERIFY_ON_DEVICE);
  ASSERT_TRUE(e.v[KT__ENV_DB].text == NULL);
  kt__envvars_free(&e);
  /* "0" is a helper idle time (none stays), not a refusal */
  ASSERT_STREQ(resolve_with("KTUNE_HELPER_IDLE_S", "0", &e), "");
  ASSERT_TRUE(e.v[KT__ENV_HELPER_IDLE_S].set);
  ASSERT_NEAR(e.v[KT__ENV_HELPER_IDLE_S].seconds, 0, 1e-12);
  kt__envvars_free(&e);
}

TEST(bad_values_are_refused_naming_the_variable_and_the_fix) {
  kt__envvars e;
  ASSERT_CONTAINS(resolve_with("KTUNE_SAMPLE_S", "2ms", &e), "KTUNE_SAMPLE_S=2ms: expected the seconds");
  ASSERT_CONTAINS(resolve_with("KTUNE_SAMPLE_S", "5", &e), "(at most 1)");
  ASSERT_CONTAINS(resolve_with("KTUNE_RUN_TIMEOUT", "0", &e), "KTUNE_RUN_TIMEOUT=0: expected seconds");
  ASSERT_CONTAINS(resolve_with("KTUNE_MAX_TENSOR_MEMORY", "lots", &e), "expected bytes, e.g. 8G or 512M");
  ASSERT_CONTAINS(resolve_with("KTUNE_BINARY_CACHE_MAX", "-1G", &e), "KTUNE_BINARY_CACHE_MAX=-1G");
  ASSERT_CONTAINS(resolve_with("KTUNE_HELPER_IDLE_S", "soon", &e), "KTUNE_HELPER_IDLE_S=soon: expected seconds");
  ASSERT_CONTAINS(resolve_with("KTUNE_ZYGOTE", "sometimes", &e), "KTUNE_ZYGOTE=sometimes: expected spawn");
  ASSERT_CONTAINS(resolve_with("KTUNE_VERIFY_ON", "gpu", &e), "KTUNE_VERIFY_ON=gpu: expected host");
  ASSERT_CONTAINS(resolve_with("KTUNE_MISS_TENSORS", "ipc", &e), "KTUNE_MISS_TENSORS=ipc: expected device");
}

/* What no context reaches reads the same rows: a refused value reads as unset. */
TEST(one_row_read_now_follows_the_same_rules) {
  setenv("KTUNE_VERIFY_ON", "host", 1);
  ASSERT_EQ(kt__envvar_choice(KT__ENV_VERIFY_ON), KT__VERIFY_ON_HOST);
  setenv("KTUNE_VERIFY_ON", "gpu", 1);
  ASSERT_EQ(kt__envvar_choice(KT__ENV_VERIFY_ON), KT__VERIFY_ON_DEVICE);
  unsetenv("KTUNE_VERIFY_ON");
  setenv("KTUNE_TRACE", "0", 1);
  ASSERT_FALSE(kt__envvar_flag(KT__ENV_TRACE));
  setenv("KTUNE_TRACE", "yes", 1);
  ASSERT_TRUE(kt__envvar_flag(KT__ENV_TRACE));
  unsetenv("KTUNE_TRACE");
  setenv("KTUNE_HELPER", "", 1);
  ASSERT_TRUE(kt__envvar_text(KT__ENV_HELPER) == NULL);
  unsetenv("KTUNE_HELPER");
}

/* The context resolves the table once: a limit comes from it, a bad row
 * fails the create, and its values stay what they were at create. */
TEST(context_resolves_the_table_at_create) {
  kt_options o = {0};
  o.no_db = 1;
  kt_context *ctx;
  setenv("KTUNE_COMPILE_TIMEOUT", "7", 1);
  setenv("KTUNE_SAMPLE_S", "0.01", 1);
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_OK);
  unsetenv("KTUNE_SAMPLE_S");
  unsetenv("KTUNE_COMPILE_TIMEOUT");
  ASSERT_NEAR(ctx->opts.compile_timeout_s, 7, 1e-12);
  ASSERT_NEAR(ctx->env.v[KT__ENV_SAMPLE_S].seconds, 0.01, 1e-12);
  kt_context_destroy(ctx);
  setenv("KTUNE_ZYGOTE", "never", 1);
  ASSERT_EQ(kt_context_create(&o, &ctx), KT_INVALID);
  unsetenv("KTUNE_ZYGOTE");
  ASSERT_CONTAINS(kt_errmsg(ctx), "KTUNE_ZYGOTE=never");
  kt_context_destroy(ctx);
}

/* The table is the one reader of the environment in src/: no file but
 * envvars.c calls getenv. */
TEST(getenv_is_called_only_by_the_table) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "grep -rlE '\\bgetenv *\\(' %s/src --include='*.c' | grep -v '/envvars\\.c$'",
           KTUNE_SOURCE_DIR);
  FILE *p = popen(cmd, "r");
  ASSERT_TRUE(p != NULL);
  char line[1024] = "";
  bool found = fgets(line, sizeof line, p) != NULL;
  pclose(p);
  if (found) fprintf(stderr, "reads the environment outside src/envvars.c: %s", line);
  ASSERT_FALSE(found);
  ASSERT_STREQ(kt__envvar_name(KT__ENV_SAMPLE_S), "KTUNE_SAMPLE_S");
}
