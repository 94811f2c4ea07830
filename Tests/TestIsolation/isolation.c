/* Every test process runs as a fresh user: before any test code, this constructor points
   HOME and TMPDIR into a private temporary folder and removes what would send phikit (or the
   Python reference servers a test starts) to the user's own folders — XDG_*_HOME, every HF_*
   variable, and every PHIKIT_* variable except the few that steer the tests themselves. The
   store, the Hugging Face cache and the config then all resolve inside the private folder, in
   this process and in every phikit it spawns, so `make demo && make test` and two `make test`
   in a row see the same empty world. The folder is removed when the process exits.

   A C constructor because it must run before anything reads the environment: Swift has no
   global set-up hook that runs before every test of every suite. */
#define _XOPEN_SOURCE 700
#include "TestIsolation.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

static char private_root[1024];
static pid_t owner;

const char *pk_test_private_root(void) { return private_root; }

/* Variables that steer the tests, not phikit: kept. */
static const char *const kept[] = {
    "PHIKIT_BINARY", "PHIKIT_SKIP_SLOW", "PHIKIT_BENCH", "PHIKIT_QUANT_BENCH",
    "PHIKIT_ROUNDTRIP_OUT", NULL,
};

static int is_kept(const char *name, size_t length) {
    for (const char *const *k = kept; *k; k++)
        if (strlen(*k) == length && strncmp(*k, name, length) == 0) return 1;
    return 0;
}

static int is_user_location(const char *entry, size_t length) {
    if (length > 3 && strncmp(entry, "HF_", 3) == 0) return 1;
    if (length > 7 && strncmp(entry, "PHIKIT_", 7) == 0) return !is_kept(entry, length);
    if (length > 4 && strncmp(entry, "XDG_", 4) == 0) {
        /* XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME, XDG_STATE_HOME, XDG_*_DIRS */
        return (length > 5 && strncmp(entry + length - 5, "_HOME", 5) == 0)
            || (length > 5 && strncmp(entry + length - 5, "_DIRS", 5) == 0);
    }
    return strncmp(entry, "TRANSFORMERS_OFFLINE", length) == 0 && length == 20;
}

static void unset_user_locations(void) {
    /* Collect the names first: unsetenv edits environ under the loop. */
    char names[256][128];
    int count = 0;
    for (char **e = environ; e && *e && count < 256; e++) {
        const char *eq = strchr(*e, '=');
        size_t length = eq ? (size_t)(eq - *e) : strlen(*e);
        if (length < sizeof names[0] && is_user_location(*e, length)) {
            memcpy(names[count], *e, length);
            names[count][length] = 0;
            count++;
        }
    }
    for (int i = 0; i < count; i++) unsetenv(names[i]);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

static void remove_private_root(void) {
    if (private_root[0] && getpid() == owner)
        nftw(private_root, remove_entry, 32, FTW_DEPTH | FTW_PHYS);
}

__attribute__((constructor)) static void pk_isolate_test_process(void) {
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    char path[sizeof private_root];
    int n = snprintf(path, sizeof path, "%s/phikit-test.XXXXXX", tmp);
    if (n < 0 || (size_t)n >= sizeof path || !mkdtemp(path)) {
        fprintf(stderr, "error: cannot make the tests' private folder in %s: %s\n", tmp,
                strerror(errno));
        /* A HOME that does not exist: nothing can reach the user's own folders. */
        setenv("HOME", "/nonexistent/phikit-test-home", 1);
        unset_user_locations();
        return;
    }
    memcpy(private_root, path, sizeof path);
    owner = getpid();
    char home[sizeof private_root + 16], tmpdir[sizeof private_root + 16];
    snprintf(home, sizeof home, "%s/home", private_root);
    snprintf(tmpdir, sizeof tmpdir, "%s/tmp", private_root);
    mkdir(home, 0700);
    mkdir(tmpdir, 0700);
    unset_user_locations();
    setenv("HOME", home, 1);
    setenv("TMPDIR", tmpdir, 1);
    atexit(remove_private_root);
}
