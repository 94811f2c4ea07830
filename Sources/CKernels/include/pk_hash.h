#ifndef PHIKIT_PK_HASH_H
#define PHIKIT_PK_HASH_H
/* SHA-256 (the Hub's LFS oid, the blob name in the HF cache) and SHA-1 (git blob ids, the
   Hub's etag for small non-LFS files). Streaming: init, update any number of times, final.
   Each compression function comes as a scalar `_ref` and, for SHA-256, an x86 SHA-NI
   version picked at run time; `pk_sha256_blocks` dispatches. */
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t state[8];
    uint64_t length;      /* bytes hashed so far */
    uint8_t buffer[64];   /* partial block */
    uint32_t buffered;    /* bytes in buffer */
} pk_sha256_ctx;

typedef struct {
    uint32_t state[5];
    uint64_t length;
    uint8_t buffer[64];
    uint32_t buffered;
} pk_sha1_ctx;

void pk_sha256_init(pk_sha256_ctx *ctx);
void pk_sha256_update(pk_sha256_ctx *ctx, const void *data, size_t count);
void pk_sha256_final(pk_sha256_ctx *ctx, uint8_t digest[32]);
/* Compresses `blocks` 64-byte blocks into state. */
void pk_sha256_blocks_ref(uint32_t state[8], const uint8_t *data, size_t blocks);
void pk_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);
/* 1 if pk_sha256_blocks uses the SHA-NI path on this CPU. */
int pk_sha256_accelerated(void);
/* Forces the scalar path (0) or allows SHA-NI again (1); for tests and benchmarks. */
void pk_sha256_set_accelerated(int allowed);

void pk_sha1_init(pk_sha1_ctx *ctx);
void pk_sha1_update(pk_sha1_ctx *ctx, const void *data, size_t count);
void pk_sha1_final(pk_sha1_ctx *ctx, uint8_t digest[20]);
void pk_sha1_blocks_ref(uint32_t state[5], const uint8_t *data, size_t blocks);
#endif
