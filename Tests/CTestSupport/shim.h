#ifndef VAULTFILE_CTESTSUPPORT_H
#define VAULTFILE_CTESTSUPPORT_H
#include <spawn.h>

// glibc (2.34+) declares these only under _GNU_SOURCE, which Swift's Glibc module lacks; the
// test harness's ChildProcess needs them to start each child atomically: pipes that no other
// thread's child can inherit, no descriptor but 0-2 in the child, and its working folder.
int pipe2(int fds[2], int flags);
int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);
#endif
