/* What SHA-1 and SHA-256 share: both are Merkle–Damgård hashes over 64-byte blocks with a
   64-bit big-endian bit count, so buffering a partial block, the final padding and writing
   the state words out big-endian are the same code; only the compression function differs
   (passed in, and inlined away since each caller passes a constant). Internal header: not
   part of the module. */
#ifndef PHIKIT_MD_BLOCKS_H
#define PHIKIT_MD_BLOCKS_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef void (*md_compress_fn)(uint32_t *state, const uint8_t *data, size_t blocks);

/* The streaming state both contexts hold, by field (their layouts are public API). */
typedef struct {
    uint32_t *state;
    uint64_t *length;
    uint8_t *buffer;
    uint32_t *buffered;
} md_stream;

static inline void md_init(md_stream s, const uint32_t *iv, int words) {
    memcpy(s.state, iv, sizeof(uint32_t) * (size_t)words);
    *s.length = 0;
    *s.buffered = 0;
}

static inline void md_update(md_stream s, md_compress_fn compress, const void *data,
                             size_t count) {
    const uint8_t *p = (const uint8_t *)data;
    *s.length += count;
    if (*s.buffered > 0) {
        size_t take = 64 - *s.buffered < count ? 64 - *s.buffered : count;
        memcpy(s.buffer + *s.buffered, p, take);
        *s.buffered += (uint32_t)take;
        p += take;
        count -= take;
        if (*s.buffered < 64) return;
        compress(s.state, s.buffer, 1);
        *s.buffered = 0;
    }
    if (count >= 64) { /* whole blocks straight from the caller's memory, no copy */
        compress(s.state, p, count / 64);
        p += count & ~(size_t)63;
        count &= 63;
    }
    memcpy(s.buffer, p, count);
    *s.buffered = (uint32_t)count;
}

/* Pads (0x80, zeros, the bit count), compresses the last block(s) and writes `words` state
   words big-endian into digest. The length stays the count of message bytes. */
static inline void md_final(md_stream s, md_compress_fn compress, int words, uint8_t *digest) {
    uint64_t bits = *s.length * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = (*s.buffered < 56 ? 56 : 120) - *s.buffered;
    for (int i = 0; i < 8; i++) pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    uint64_t length = *s.length;
    md_update(s, compress, pad, padlen + 8);
    *s.length = length;
    for (int i = 0; i < words; i++) {
        digest[4 * i] = (uint8_t)(s.state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(s.state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(s.state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)s.state[i];
    }
}

#define MD_STREAM(ctx) ((md_stream){(ctx)->state, &(ctx)->length, (ctx)->buffer, &(ctx)->buffered})
#endif
