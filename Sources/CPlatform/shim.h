#ifndef VAULTFILE_CPLATFORM_H
#define VAULTFILE_CPLATFORM_H
#include <sys/prctl.h>
#include <sys/vfs.h>

/// Calls prctl(PR_SET_DUMPABLE, 0): no core dump, no ptrace attach by
/// unprivileged processes of the same user. Swift cannot call the variadic prctl.
static inline int vaultfile_set_not_dumpable(void) {
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}
/// The file system type (statfs(2)'s f_type) of `path`, or -1 when statfs fails.
static inline long vaultfile_filesystem_type(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    return (long)info.f_type;
}
#endif
