#ifndef VAULTFILE_CPLATFORM_H
#define VAULTFILE_CPLATFORM_H
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <sys/xattr.h>

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

/// The process id and user id of the peer of a connected Unix socket (getsockopt SO_PEERCRED,
/// as the kernel recorded them at connect or listen); 0 on success, -1 with errno set. The
/// struct is spelled out because `struct ucred` needs _GNU_SOURCE, which Swift's Glibc lacks.
static inline int vaultfile_peer_credentials(int fd, int *pid, unsigned int *uid) {
    struct { int pid; unsigned int uid; unsigned int gid; } credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    if (length != sizeof credentials) return -1;
    *pid = credentials.pid;
    *uid = credentials.uid;
    return 0;
}

int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/// Calls accept4(2) with SOCK_CLOEXEC: the connection is never inherited by a child started at
/// the same moment from another thread.
static inline int vaultfile_accept_cloexec(int fd) {
    return accept4(fd, 0, 0, SOCK_CLOEXEC);
}
#endif
