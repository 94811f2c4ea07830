/* CRC-32C, reflected, polynomial 0x82F63B78 (see pk_crc32c.h). The SSE4.2 path runs three
   streams over three consecutive lanes of a long buffer and joins their CRCs by "appending
   zeros" to the earlier ones: the CRC register is linear over GF(2), so
   state(A || B) = shift(state(A), |B|) ^ state_from_zero(B), and the shift by a fixed lane
   length is one lookup per byte of the state in a table built once (the construction Mark
   Adler's public-domain crc32c.c uses). */
#include "accel_switch.h"
#include "pk_crc32c.h"
#include <pthread.h>
#include <string.h>

#define POLY 0x82F63B78u

static uint32_t table[256];           /* one byte of message into the register */
static uint32_t shift_long[4][256];   /* append LONG_LANE zero bytes */
static uint32_t shift_short[4][256];  /* append SHORT_LANE zero bytes */
enum { LONG_LANE = 8192, SHORT_LANE = 256 };  /* powers of two (see zeros_operator) */

/* mat is a 32x32 bit matrix as 32 columns; returns mat * vec. */
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec) {
    uint32_t sum = 0;
    for (; vec; vec >>= 1, mat++)
        if (vec & 1) sum ^= *mat;
    return sum;
}

static void gf2_square(uint32_t *square, const uint32_t *mat) {
    for (int n = 0; n < 32; n++) square[n] = gf2_times(mat, mat[n]);
}

/* The operator that appends `len` zero bytes to a register; len a power of two >= 1. */
static void zeros_operator(uint32_t op[32], size_t len) {
    uint32_t odd[32], even[32];
    odd[0] = POLY; /* one zero bit */
    for (int n = 1; n < 32; n++) odd[n] = 1u << (n - 1);
    gf2_square(even, odd); /* two bits */
    gf2_square(odd, even); /* four bits */
    /* each square doubles: even holds 8 bits (1 byte), then odd 2 bytes, ... */
    for (;;) {
        gf2_square(even, odd);
        if ((len >>= 1) == 0) { memcpy(op, even, sizeof even); return; }
        gf2_square(odd, even);
        if ((len >>= 1) == 0) { memcpy(op, odd, sizeof odd); return; }
    }
}

static void shift_table(uint32_t out[4][256], size_t len) {
    uint32_t op[32];
    zeros_operator(op, len);
    for (uint32_t b = 0; b < 256; b++)
        for (int k = 0; k < 4; k++) out[k][b] = gf2_times(op, b << (8 * k));
}

static uint32_t shift(const uint32_t t[4][256], uint32_t crc) {
    return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24];
}

static void build_tables(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
        table[n] = c;
    }
    shift_table(shift_long, LONG_LANE);
    shift_table(shift_short, SHORT_LANE);
}

/* The tables are built once, before any thread reads them. */
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

uint32_t pk_crc32c_update_ref(uint32_t crc, const void *data, size_t count) {
    pthread_once(&tables_once, build_tables);
    const uint8_t *p = data;
    crc = ~crc;
    while (count--) crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>
#define PK_HAVE_SSE42_PATH 1

static int cpu_has_sse42(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c >> 20) & 1;
}

/* Three lanes of `lane` bytes at a time, while at least 3*lane bytes are left. */
__attribute__((target("sse4.2")))
static uint64_t lanes(uint64_t crc, const uint8_t **next, size_t *count, size_t lane,
                      const uint32_t t[4][256]) {
    const uint8_t *p = *next;
    while (*count >= 3 * lane) {
        uint64_t c1 = 0, c2 = 0;
        const uint8_t *end = p + lane;
        do {
            uint64_t w0, w1, w2;
            memcpy(&w0, p, 8);
            memcpy(&w1, p + lane, 8);
            memcpy(&w2, p + 2 * lane, 8);
            crc = _mm_crc32_u64(crc, w0);
            c1 = _mm_crc32_u64(c1, w1);
            c2 = _mm_crc32_u64(c2, w2);
            p += 8;
        } while (p < end);
        crc = shift(t, (uint32_t)crc) ^ (uint32_t)c1;
        crc = shift(t, (uint32_t)crc) ^ (uint32_t)c2;
        p += 2 * lane;
        *count -= 3 * lane;
    }
    *next = p;
    return crc;
}

__attribute__((target("sse4.2")))
static uint32_t crc32c_sse42(uint32_t start, const void *data, size_t count) {
    pthread_once(&tables_once, build_tables);
    const uint8_t *p = data;
    uint64_t crc = ~start;
    while (count > 0 && ((uintptr_t)p & 7)) { crc = _mm_crc32_u8((uint32_t)crc, *p++); count--; }
    crc = lanes(crc, &p, &count, LONG_LANE, shift_long);
    crc = lanes(crc, &p, &count, SHORT_LANE, shift_short);
    for (; count >= 8; count -= 8, p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        crc = _mm_crc32_u64(crc, w);
    }
    while (count--) crc = _mm_crc32_u8((uint32_t)crc, *p++);
    return ~(uint32_t)crc;
}
#else
#define PK_HAVE_SSE42_PATH 0
static int cpu_has_sse42(void) { return 0; }
#endif

static accel_switch sse42 = ACCEL_SWITCH_INIT;

int pk_crc32c_accelerated(void) { return accel_in_use(&sse42, cpu_has_sse42); }

void pk_crc32c_set_accelerated(int allowed) { accel_allow(&sse42, allowed); }

uint32_t pk_crc32c_update(uint32_t crc, const void *data, size_t count) {
#if PK_HAVE_SSE42_PATH
    if (pk_crc32c_accelerated()) return crc32c_sse42(crc, data, count);
#endif
    return pk_crc32c_update_ref(crc, data, count);
}
