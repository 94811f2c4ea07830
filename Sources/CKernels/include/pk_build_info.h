#ifndef PK_BUILD_INFO_H
#define PK_BUILD_INFO_H

/* The git commit this binary was built from (the Makefile passes -DPHIKIT_COMMIT=<hash>),
   or "unknown" for a plain `swift build`. In C because a Swift -D define carries no value. */
const char *pk_build_commit(void);

#endif
