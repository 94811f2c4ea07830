import PhiFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

InterruptHandler.install()
let status = CLI.main(Array(CommandLine.arguments.dropFirst()))
fflush(nil)  // results on stdout must be out before exit
exit(status)
