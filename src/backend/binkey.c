/* A build's binary cache key, and compile through the cache (binkey.h). */
#include "binkey.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bincache/key.h"

bool kt__build_binary_key(const kt__backend *be, const kt__build *b, unsigned char key[32], char *why, size_t whylen) {
  char ignored[256];
  if (!why) why = ignored, whylen = sizeof ignored;
  if (!kt__bincache_on(b->bincache) || !be->binary_flags) {
    snprintf(why, whylen, "%s", kt__bincache_on(b->bincache) ? "not cached by this backend" : "off");
    return false;
  }
  kt__binkey k;
  kt__binkey_init(&k);
  kt__binkey_add_str(&k, "backend", be->name);
  kt__binkey_add_str(&k, "device", b->device ? b->device->name : NULL);
  kt__binkey_add_str(&k, "arch", b->device ? b->device->arch : NULL);
  kt__binkey_add_str(&k, "driver", b->device ? b->device->driver_version : NULL);
  kt__binkey_add_str(&k, "toolchain", b->device ? b->device->toolchain_version : NULL);
  kt__binkey_add_str(&k, "kernel", b->decl->name);
  kt__sbuf flags = {0};
  be->binary_flags(b, &flags);
  kt__binkey_add_str(&k, "flags", flags.s);
  kt__sbuf_free(&flags);
  for (int i = 0; i < b->n; i++) {
    char def[160];
    snprintf(def, sizeof def, "%s=%lld", b->names[i], (long long)b->values[i]);
    kt__binkey_add_str(&k, "define", def);
  }
  /* Includes are looked for where the compiler looks: beside the file it
   * reads, the user's file itself (a symbolic link resolved) while it holds
   * what was parsed (the C backend's kernel_source). */
  char *real = b->file->src.path ? realpath(b->file->src.path, NULL) : NULL;
  const char *path = real ? real : b->file->src.path;
  bool ok = kt__binkey_add_source(&k, b->file->src.text, b->file->src.len, path, why, whylen);
  free(real);
  kt__binkey_final(&k, key);
  return ok;
}

/* ---- the entry: the artifact's files ------------------------------------
 * Each part is: u32 suffix length, suffix, u64 length, bytes (little-endian). */

static void put_le(kt__sbuf *out, uint64_t v, int bytes) {
  unsigned char b[8];
  for (int i = 0; i < bytes; i++) b[i] = (unsigned char)(v >> (8 * i));
  kt__sbuf_append(out, (const char *)b, (size_t)bytes);
}

static bool get_le(const char **p, const char *end, int bytes, uint64_t *v) {
  if (end - *p < bytes) return false;
  *v = 0;
  for (int i = 0; i < bytes; i++) *v |= (uint64_t)(unsigned char)(*p)[i] << (8 * i);
  *p += bytes;
  return true;
}

static bool slurp(const char *path, kt__sbuf *out) {
  FILE *f = fopen(path, "rbe");
  if (!f) return false;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) kt__sbuf_append(out, buf, n);
  bool ok = !ferror(f);
  fclose(f);
  return ok;
}

static void stem(const kt__build *b, const char *suffix, kt__sbuf *out) {
  kt__sbuf_printf(out, "%s/%s%s", b->workdir, b->tag, suffix);
}

/* The payload of the files compile wrote; false when the first is missing. */
static bool pack_parts(const kt__backend *be, const kt__build *b, kt__sbuf *payload) {
  for (int i = 0; i < 3 && be->artifact_parts[i]; i++) {
    kt__sbuf path = {0}, data = {0};
    stem(b, be->artifact_parts[i], &path);
    bool have = slurp(path.s, &data);
    if (have) {
      put_le(payload, strlen(be->artifact_parts[i]), 4);
      kt__sbuf_append(payload, be->artifact_parts[i], strlen(be->artifact_parts[i]));
      put_le(payload, data.len, 8);
      kt__sbuf_append(payload, data.s ? data.s : "", data.len);
    }
    kt__sbuf_free(&path);
    kt__sbuf_free(&data);
    if (!have && i == 0) return false;
  }
  return true;
}

static bool write_part(const char *path, const char *data, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < len) {
    ssize_t k = write(fd, data + done, len - done);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    done += (size_t)k;
  }
  return close(fd) == 0 && done == len;
}

/* Writes the payload's files where compile would have; false when the
 * payload is not one this backend wrote (then nothing counts as a hit). */
static bool unpack_parts(const kt__backend *be, const kt__build *b, const kt__sbuf *payload, kt__artifact *a) {
  const char *p = payload->s, *end = payload->s + payload->len;
  bool ok = payload->len > 0;
  for (int part = 0; ok && p < end; part++) {
    uint64_t slen, dlen;
    ok = get_le(&p, end, 4, &slen) && slen < 32 && (uint64_t)(end - p) >= slen;
    kt__sbuf suffix = {0}, path = {0};
    if (ok) kt__sbuf_append(&suffix, p, (size_t)slen), p += slen;
    ok = ok && (part > 0 || (suffix.s && strcmp(suffix.s, be->artifact_parts[0]) == 0));
    ok = ok && get_le(&p, end, 8, &dlen) && dlen <= (uint64_t)(end - p);
    if (ok) {
      stem(b, suffix.s, &path);
      ok = write_part(path.s, p, (size_t)dlen);
      p += dlen;
      if (ok && part == 0) a->path = kt__xstrdup(path.s);
    }
    kt__sbuf_free(&suffix);
    kt__sbuf_free(&path);
  }
  if (!ok) {
    free(a->path);
    a->path = NULL;
  }
  return ok;
}

/* The entry of KEY written where compile would have: true on a hit; a bad
 * or foreign entry is removed (*REJECTED set) and is a miss. */
static bool load_cached(const kt__backend *be, const kt__build *b, const unsigned char key[32], kt__artifact *a,
                        bool *rejected) {
  kt__sbuf payload = {0};
  bool hit = false, bad = false;
  if (kt__bincache_get(b->bincache, key, &payload, &bad) == KT_OK) {
    hit = unpack_parts(be, b, &payload, a);
    if (!hit) kt__bincache_remove(b->bincache, key); /* a whole entry, but not of this backend's making */
    bad = !hit;
  }
  kt__sbuf_free(&payload);
  *rejected = *rejected || bad;
  return hit;
}

/* Compiles B and stores what it wrote under KEY. */
static kt__status compile_and_store(const kt__backend *be, const kt__build *b, const unsigned char key[32],
                                    kt__artifact *a, kt__errbuf *eb) {
  kt__status st = be->compile(b, a, eb);
  kt__sbuf payload = {0};
  kt__errbuf *quiet = kt__xmalloc(sizeof *quiet); /* a failed store only costs a later compile */
  if (st == KT__ST_OK && pack_parts(be, b, &payload)) kt__bincache_put(b->bincache, key, payload.s, payload.len, quiet);
  free(quiet);
  kt__sbuf_free(&payload);
  return st;
}

kt__status kt__compile_cached(const kt__backend *be, const kt__build *b, kt__artifact *a, kt__errbuf *eb) {
  double t0 = kt__now();
  unsigned char key[32];
  char why[512];
  if (!kt__build_binary_key(be, b, key, why, sizeof why)) {
    kt__status st = be->compile(b, a, eb);
    a->cache_use = KT__BIN_COMPILED;
    if (kt__bincache_on(b->bincache)) a->not_cached = kt__xstrdup(why);
    return st;
  }
  bool rejected = false;
  bool hit = load_cached(be, b, key, a, &rejected);
  /* A miss waits for whoever compiles the entry now (another key's process
   * on a device of the same model) and looks again before compiling. */
  int lock = hit ? -1 : kt__bincache_lock(b->bincache, key, b->cancel);
  if (lock >= 0) hit = load_cached(be, b, key, a, &rejected);
  kt__status st = KT__ST_OK;
  if (hit) {
    a->cache_use = KT__BIN_CACHED;
    a->seconds = kt__now() - t0;
  } else {
    st = compile_and_store(be, b, key, a, eb);
    a->cache_use = rejected ? KT__BIN_REBUILT : KT__BIN_COMPILED;
  }
  kt__bincache_unlock(lock);
  return st;
}
