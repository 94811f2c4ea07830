/* SHA-256 (FIPS 180-4). The scalar compression is the oracle; on x86-64 CPUs with the SHA
   extensions (Intel Goldmont+/Ice Lake+, AMD Zen) the SHA-NI version does 4 rounds per
   two instructions and is several times faster — multi-GB weight files are hashed on every
   download and `verify`, so it matters. */
#include "accel_switch.h"
#include "md_blocks.h"
#include "pk_hash.h"

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
static inline uint32_t load_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

void pk_sha256_blocks_ref(uint32_t state[8], const uint8_t *data, size_t blocks) {
    uint32_t w[64];
    for (; blocks > 0; blocks--, data += 64) {
        for (int t = 0; t < 16; t++) w[t] = load_be32(data + 4 * t);
        for (int t = 16; t < 64; t++) {
            uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3);
            uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16] + s0 + w[t - 7] + s1;
        }
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
        for (int t = 0; t < 64; t++) {
            uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
            uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g; g = f; f = e; e = d + t1;
            d = c; c = b; b = a; a = t1 + t2;
        }
        state[0] += a; state[1] += b; state[2] += c; state[3] += d;
        state[4] += e; state[5] += f; state[6] += g; state[7] += h;
    }
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <cpuid.h>
#include <immintrin.h>
#define PK_HAVE_SHANI_PATH 1

/* The SHA-NI state layout is (ABEF, CDGH); each quad of message words Q(r+4) is derived
   from Q(r)..Q(r+3) with msg1/alignr/msg2, exactly the FIPS schedule four words at a time. */
__attribute__((target("sha,sse4.1,ssse3")))
static void sha256_blocks_shani(uint32_t state[8], const uint8_t *data, size_t blocks) {
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_loadu_si128((const __m128i *)&state[0]);  /* ABCD (little-endian lanes) */
    __m128i s1 = _mm_loadu_si128((const __m128i *)&state[4]);   /* EFGH */
    tmp = _mm_shuffle_epi32(tmp, 0xB1);                         /* CDAB */
    s1 = _mm_shuffle_epi32(s1, 0x1B);                           /* EFGH reversed */
    __m128i s0 = _mm_alignr_epi8(tmp, s1, 8);                   /* ABEF */
    s1 = _mm_blend_epi16(s1, tmp, 0xF0);                        /* CDGH */

    for (; blocks > 0; blocks--, data += 64) {
        const __m128i save0 = s0, save1 = s1;
        __m128i m[4];
        for (int i = 0; i < 4; i++)
            m[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * i)), bswap);
        for (int r = 0; r < 16; r++) {
            __m128i msg = _mm_add_epi32(m[r & 3], _mm_loadu_si128((const __m128i *)&K[4 * r]));
            s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
            s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(msg, 0x0E));
            if (r < 12) {
                __m128i t = _mm_sha256msg1_epu32(m[r & 3], m[(r + 1) & 3]);
                t = _mm_add_epi32(t, _mm_alignr_epi8(m[(r + 3) & 3], m[(r + 2) & 3], 4));
                m[r & 3] = _mm_sha256msg2_epu32(t, m[(r + 3) & 3]);
            }
        }
        s0 = _mm_add_epi32(s0, save0);
        s1 = _mm_add_epi32(s1, save1);
    }

    tmp = _mm_shuffle_epi32(s0, 0x1B);      /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xB1);       /* DCHG */
    s0 = _mm_blend_epi16(tmp, s1, 0xF0);    /* DCBA */
    s1 = _mm_alignr_epi8(s1, tmp, 8);       /* HGFE */
    _mm_storeu_si128((__m128i *)&state[0], s0);
    _mm_storeu_si128((__m128i *)&state[4], s1);
}

/* CPUID leaf 7 EBX bit 29 = SHA; leaf 1 ECX bits 9 (SSSE3) and 19 (SSE4.1). */
static int cpu_has_shani(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    if (!(c & (1u << 9)) || !(c & (1u << 19))) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b >> 29) & 1;
}
#else
#define PK_HAVE_SHANI_PATH 0
static int cpu_has_shani(void) { return 0; }
#endif

static accel_switch shani = ACCEL_SWITCH_INIT;

int pk_sha256_accelerated(void) { return accel_in_use(&shani, cpu_has_shani); }

void pk_sha256_set_accelerated(int allowed) { accel_allow(&shani, allowed); }

void pk_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t blocks) {
#if PK_HAVE_SHANI_PATH
    if (pk_sha256_accelerated()) {
        sha256_blocks_shani(state, data, blocks);
        return;
    }
#endif
    pk_sha256_blocks_ref(state, data, blocks);
}

void pk_sha256_init(pk_sha256_ctx *ctx) {
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    md_init(MD_STREAM(ctx), iv, 8);
}

void pk_sha256_update(pk_sha256_ctx *ctx, const void *data, size_t count) {
    md_update(MD_STREAM(ctx), pk_sha256_blocks, data, count);
}

void pk_sha256_final(pk_sha256_ctx *ctx, uint8_t digest[32]) {
    md_final(MD_STREAM(ctx), pk_sha256_blocks, 8, digest);
}
