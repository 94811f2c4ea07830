import PhiFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// A closed stdout pipe must come back as EPIPE from write (see StandardOutput), not kill us.
signal(SIGPIPE, SIG_IGN)
InterruptHandler.install()
let status = CLI.main(Array(CommandLine.arguments.dropFirst()))
fflush(nil)  // results on stdout must be out before exit
exit(status)
