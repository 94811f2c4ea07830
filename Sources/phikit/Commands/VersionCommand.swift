import PhiEngine
import PhiKit

/// `phikit version` (and `phikit --version`): the version, the commit it was built from and
/// the kernel path this CPU gets, for bug reports and for checking an install.
struct VersionCommand: Command {
    static let name = "version"
    static let summary = "Print the version, build commit and the kernels this CPU uses"
    static let usage = "phikit version"
    static let help = """
        Prints the phikit version, the git commit it was built from ("unknown" when built
        without the Makefile) and the matrix-vector kernel path chosen on this CPU
        (AVX-512 VNNI, AVX2 or portable). `phikit --version` prints the same.
        """

    init(_ args: inout ArgumentReader) throws {
        try args.finish()
    }

    func run() throws {
        try StandardOutput.print(Self.text)
    }

    static var text: String {
        """
        phikit \(PhiKitVersion.string)
        commit: \(BuildInfo.commit)
        kernels: \(BuildInfo.kernelPath)
        """
    }
}
