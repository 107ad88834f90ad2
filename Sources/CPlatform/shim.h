#ifndef VAULTFILE_CPLATFORM_H
#define VAULTFILE_CPLATFORM_H
#include <sys/prctl.h>

/// Calls prctl(PR_SET_DUMPABLE, 0): no core dump, no ptrace attach by
/// unprivileged processes of the same user. Swift cannot call the variadic prctl.
static inline int vaultfile_set_not_dumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
#endif
