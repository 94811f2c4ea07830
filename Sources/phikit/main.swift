import PhiFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Ctrl-C: a job that can stop cleanly (see `Cancellation`) is asked to, and exits 130 after
// removing its partial output; anything else — or a second Ctrl-C — exits 130 at once, which
// is safe because writers go through `*.incomplete` files and rename only when done.
signal(SIGINT) { _ in
    if !Cancellation.interrupt() { _exit(130) }
}
// A parent may hand us a mask with SIGINT blocked (Foundation's Process spawns children with
// its worker thread's mask); then Ctrl-C would stay pending forever.
var interruptOnly = sigset_t()
sigemptyset(&interruptOnly)
sigaddset(&interruptOnly, SIGINT)
pthread_sigmask(SIG_UNBLOCK, &interruptOnly, nil)

let status = CLI.main(Array(CommandLine.arguments.dropFirst()))
fflush(nil)  // results on stdout must be out before exit
exit(status)
