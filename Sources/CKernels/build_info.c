#include "pk_build_info.h"

#define PK_STRING(x) #x
#define PK_EXPAND(x) PK_STRING(x)

const char *pk_build_commit(void) {
#ifdef PHIKIT_COMMIT
    return PK_EXPAND(PHIKIT_COMMIT);
#else
    return "unknown";
#endif
}
