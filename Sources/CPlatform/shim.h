#ifndef VAULTFILE_CPLATFORM_H
#define VAULTFILE_CPLATFORM_H
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <sys/xattr.h>

/// A file without a name in `directory` (O_TMPFILE), read-write, close-on-exec, mode 0600. O_EXCL
/// makes it one that can never be given a name (linkat through /proc/PID/fd is refused), so it
/// goes with its last descriptor. O_TMPFILE is glibc's per-architecture value (its O_DIRECTORY bit
/// differs between x86-64 and arm64). -1 with errno when the file system has no O_TMPFILE.
static inline int vaultfile_open_nameless(const char *directory) {
#ifdef O_TMPFILE
    return open(directory, O_TMPFILE | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
#else
    return open(directory, __O_TMPFILE | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
#endif
}

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

/// One pass of `vaultfile_remove_tree_signal_safe`: every entry is visited once (no retry inside the
/// recursion, so the work is linear in the tree's size), and each call spends one unit of `budget`.
static inline int vaultfile_remove_tree_pass(int folder, const char *name, int depth, long *budget) {
    if (--*budget < 0) return -1;
    if (unlinkat(folder, name, 0) == 0 || errno == ENOENT) return 0;
    if (depth <= 0) return -1;
    int fd = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    // Small: one frame per level, on the stack of whichever thread took the signal.
    char buffer[512] __attribute__((aligned(8)));
    long count;
    while (*budget > 0 && (count = syscall(SYS_getdents64, fd, buffer, sizeof buffer)) > 0) {
        for (long offset = 0; offset < count && *budget > 0;) {
            const char *entry = buffer + offset;
            unsigned short length;
            __builtin_memcpy(&length, entry + 16, sizeof length);
            const char *entryName = entry + 19;
            if (length == 0) break;
            offset += length;
            if (entryName[0] == '.' && (entryName[1] == 0 || (entryName[1] == '.' && entryName[2] == 0))) continue;
            vaultfile_remove_tree_pass(fd, entryName, depth - 1, budget);
        }
    }
    int gone = unlinkat(folder, name, AT_REMOVEDIR) == 0 || errno == ENOENT;
    close(fd);
    return gone ? 0 : -1;
}

/// Removes `name` in the folder open as `folder` and all it holds, following no link, with
/// async-signal-safe calls only (unlinkat, openat, getdents64 through syscall(2), close; no
/// allocation): a signal handler's removal of a half-written pass store. At most `depth` levels are entered; entries
/// removed while a folder is read may make a pass skip others, so the whole tree is walked again,
/// at most three passes in all, and the passes together make at most 2^20 calls: the time a
/// handler spends is bounded whatever the tree (attacker review att57, M6: the old retry at every
/// level took 3^depth calls). Returns 0 when it is gone, -1 when something stayed.
static inline int vaultfile_remove_tree_signal_safe(int folder, const char *name, int depth) {
    long budget = 1L << 20;
    for (int pass = 0; pass < 3 && budget > 0; pass++) {
        if (vaultfile_remove_tree_pass(folder, name, depth, &budget) == 0) return 0;
    }
    return -1;
}

/// Gives the heap's free pages back to the system (glibc's malloc_trim(0), which Swift's Glibc
/// module does not declare): freed memory in the middle of the heap otherwise stays resident until
/// the top of the heap is free. 1 when memory was given back.
static inline int vaultfile_release_free_heap(void) {
    return malloc_trim(0);
}
#endif
