#ifndef PHIKIT_PK_CRC32C_H
#define PHIKIT_PK_CRC32C_H
/* CRC-32C (Castagnoli, the iSCSI/ext4/Btrfs checksum): what guards the disk prefix cache's
   files. Not a cryptographic hash: it catches truncation, torn writes and flipped bits (every
   burst up to 32 bits, any other damage with probability 1 - 2^-32), which is what a cache of
   the process's own files needs, at memory speed: x86-64's SSE4.2 `crc32` instruction, three
   independent streams to hide its 3-cycle latency, runs at >10 GB/s where SHA-256 (even
   SHA-NI) does ~2. */
#include <stddef.h>
#include <stdint.h>

/* The CRC of `crc`'s message followed by `count` bytes of `data`; start with 0. Chaining
   calls over consecutive pieces gives the CRC of the whole: crc("123456789") = 0xE3069283. */
uint32_t pk_crc32c_update(uint32_t crc, const void *data, size_t count);
/* The byte-at-a-time table version: the oracle, and what runs without SSE4.2. */
uint32_t pk_crc32c_update_ref(uint32_t crc, const void *data, size_t count);
/* 1 if pk_crc32c_update uses the SSE4.2 instruction on this CPU. */
int pk_crc32c_accelerated(void);
/* Forces the table path (0) or allows the instruction again (1); for tests and benchmarks. */
void pk_crc32c_set_accelerated(int allowed);
#endif
