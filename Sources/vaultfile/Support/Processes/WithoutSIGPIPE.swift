#if canImport(Glibc)
import Glibc
#endif

// MARK: - A write to a child's pipe that does not end vaultfile

/// `body` (a `write(2)` to a pipe, its result) with SIGPIPE blocked in this thread, a SIGPIPE it
/// raised taken before unblocking: a child that closed its end makes the write fail with EPIPE,
/// and vaultfile goes on. `errno` is `body`'s.
func withoutSIGPIPE(_ body: () -> Int) -> Int {
    var pipeSignal = sigset_t(), previous = sigset_t(), pending = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    sigpending(&pending)
    let alreadyPending = sigismember(&pending, SIGPIPE) == 1
    pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
    let result = body()
    let code = errno
    if result < 0 && code == EPIPE && !alreadyPending {
        var none = timespec(tv_sec: 0, tv_nsec: 0)
        while sigtimedwait(&pipeSignal, nil, &none) < 0 && errno == EINTR {}
    }
    pthread_sigmask(SIG_SETMASK, &previous, nil)
    errno = code
    return result
}
