#include "pk_version.h"
int pk_kernels_abi_version(void) { return 1; }
