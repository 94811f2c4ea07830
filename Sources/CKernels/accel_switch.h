/* What the hash kernels with a CPU-specific path share (crc32c.c: SSE4.2, sha256.c: SHA-NI):
   whether the CPU has the path, asked once, and whether it is allowed, so tests and
   `--stats` can turn it off and check the portable code on the same machine. Internal
   header: not part of the module. */
#ifndef PHIKIT_ACCEL_SWITCH_H
#define PHIKIT_ACCEL_SWITCH_H

/* state: -1 unknown, 0 absent, 1 present. A benign race: every thread computes the same
   value. */
typedef struct {
    volatile int state;
    volatile int allowed;
} accel_switch;

#define ACCEL_SWITCH_INIT {-1, 1}

/* 1 when the path is present (`cpu_has` is asked the first time) and allowed. */
static inline int accel_in_use(accel_switch *s, int (*cpu_has)(void)) {
    if (s->state < 0) s->state = cpu_has();
    return s->state && s->allowed;
}

static inline void accel_allow(accel_switch *s, int allowed) { s->allowed = allowed != 0; }
#endif
