/* zlib for Swift: crc32/inflate for archive and transfer checks. */
#ifndef PHIKIT_CZLIB_SHIM_H
#define PHIKIT_CZLIB_SHIM_H
#include <zlib.h>
#endif
