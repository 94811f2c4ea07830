#ifndef PHIKIT_TEST_ISOLATION_H
#define PHIKIT_TEST_ISOLATION_H

/* The private folder this test process runs in (see isolation.c), or "" when it could not be
   made (then the constructor has printed why and the tests fail before touching any user
   folder: HOME points at a path that does not exist). */
const char *pk_test_private_root(void);

#endif
