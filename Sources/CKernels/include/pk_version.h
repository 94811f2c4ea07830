#ifndef PHIKIT_PK_VERSION_H
#define PHIKIT_PK_VERSION_H
/* Bumped when a kernel's numeric contract changes. */
int pk_kernels_abi_version(void);
#endif
