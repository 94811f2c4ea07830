/* SHA-1 (FIPS 180-4), only for git blob ids ("blob <size>\0" + content): the Hub's etag for
   small non-LFS files and the blob name in the HF cache. Never used for security. Scalar
   only: these files are kilobytes. */
#include "md_blocks.h"
#include "pk_hash.h"

static inline uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

void pk_sha1_blocks_ref(uint32_t state[5], const uint8_t *data, size_t blocks) {
    uint32_t w[80];
    for (; blocks > 0; blocks--, data += 64) {
        for (int t = 0; t < 16; t++)
            w[t] = ((uint32_t)data[4 * t] << 24) | ((uint32_t)data[4 * t + 1] << 16) |
                   ((uint32_t)data[4 * t + 2] << 8) | data[4 * t + 3];
        for (int t = 16; t < 80; t++) w[t] = rol(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
        for (int t = 0; t < 80; t++) {
            uint32_t f, k;
            if (t < 20) { f = (b & c) | (~b & d); k = 0x5a827999; }
            else if (t < 40) { f = b ^ c ^ d; k = 0x6ed9eba1; }
            else if (t < 60) { f = (b & c) | (b & d) | (c & d); k = 0x8f1bbcdc; }
            else { f = b ^ c ^ d; k = 0xca62c1d6; }
            uint32_t tmp = rol(a, 5) + f + e + k + w[t];
            e = d; d = c; c = rol(b, 30); b = a; a = tmp;
        }
        state[0] += a; state[1] += b; state[2] += c; state[3] += d; state[4] += e;
    }
}

void pk_sha1_init(pk_sha1_ctx *ctx) {
    static const uint32_t iv[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
    md_init(MD_STREAM(ctx), iv, 5);
}

void pk_sha1_update(pk_sha1_ctx *ctx, const void *data, size_t count) {
    md_update(MD_STREAM(ctx), pk_sha1_blocks_ref, data, count);
}

void pk_sha1_final(pk_sha1_ctx *ctx, uint8_t digest[20]) {
    md_final(MD_STREAM(ctx), pk_sha1_blocks_ref, 5, digest);
}
