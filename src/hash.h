/* SHA-256 (FIPS 180-4), written for ktune's keys: a kernel's source hash
 * decides whether a stored result or a cached binary may be reused, so it
 * must be a real collision-resistant digest, not a fast checksum. */
#ifndef KT_HASH_H
#define KT_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct kt__sha256 {
  uint32_t h[8];
  uint64_t nbytes;         /* message length so far */
  unsigned char block[64]; /* pending partial block */
  size_t nblock;
} kt__sha256;

void kt__sha256_init(kt__sha256 *c);
void kt__sha256_update(kt__sha256 *c, const void *data, size_t len);
void kt__sha256_final(kt__sha256 *c, unsigned char digest[32]);
/* Lower-case hex of a 32-byte digest, NUL-terminated. */
void kt__sha256_hex(const unsigned char digest[32], char out[65]);
/* Hex SHA-256 digest of a text (for source hashes). */
void kt__hash_text(const char *text, size_t len, char out[65]);

#endif
