import Foundation
import Testing

/// The command line as a user meets it: help, version, exit codes, and where text goes.
@Suite("command line")
struct CommandLineTests {
    @Test func versionPrintsToStdout() throws {
        let r = try Phikit.run("--version")
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("phikit "))
        #expect(r.stdout.contains("."))
        #expect(r.stderr.isEmpty)
    }

    @Test(
        "--help, -h and `help` print the overview to stdout",
        arguments: [["--help"], ["-h"], ["help"]])
    func overview(_ args: [String]) throws {
        let r = try Phikit.run(args)
        #expect(r.status == 0)
        for command in ["pull", "convert", "verify", "run", "list", "rm", "inspect"] {
            #expect(r.stdout.contains("\n  \(command) "), "overview lists \(command)")
        }
        #expect(r.stdout.contains("exit codes"))
        #expect(r.stderr.isEmpty)
    }

    @Test func noCommandIsAUsageErrorWithTheOverviewOnStderr() throws {
        let r = try Phikit.run([])
        #expect(r.status == 64)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("usage: phikit <command>"))
    }

    @Test(
        "help for a command",
        arguments: [
            ["help", "inspect"], ["inspect", "--help"], ["inspect", "-h"],
            ["run", "x", "--bogus", "--help"],
        ])
    func commandHelp(_ args: [String]) throws {
        let r = try Phikit.run(args)
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("usage: phikit \(args[0] == "help" ? args[1] : args[0])"))
        #expect(r.stderr.isEmpty)
    }

    @Test func helpConvertShowsConvertsOptions() throws {
        let r = try Phikit.run("help", "convert")
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("usage: phikit convert"))
        #expect(r.stdout.contains("--group-size"))
    }

    @Test func unknownCommand() throws {
        let r = try Phikit.run("inspcet", "x")
        #expect(r.status == 64)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("error: unknown command 'inspcet'"))
        #expect(r.stderr.contains("hint: did you mean 'inspect'?"))
        #expect(r.stderr.contains("pull, "))
    }

    @Test func unknownFlagSuggestsTheNearestOne() throws {
        let r = try Phikit.run("pull", "phi-3.5-mini", "--incldue", "*.json")
        #expect(r.status == 64)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("error: unknown option '--incldue'"))
        #expect(r.stderr.contains("hint: did you mean '--include'?"))
        #expect(r.stderr.contains("usage: phikit pull"))
    }

    @Test func convertTypoGetsTheFlagItMeant() throws {
        let r = try Phikit.run("convert", "some/model", "-q", "--group-sise", "32")
        #expect(r.status == 64)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("error: unknown option '--group-sise'"))
        #expect(r.stderr.contains("hint: did you mean '--group-size'?"))
        #expect(r.stderr.contains("usage: phikit convert"))
    }

    @Test func badSize() throws {
        let r = try Phikit.run("convert", "some/model", "--max-shard-size", "lots")
        #expect(r.status == 64)
        #expect(r.stderr.contains("expected a size such as 500MB or 5GB"))
    }

    @Test func unknownFlagBeforeAMissingArgumentIsReportedFirst() throws {
        let r = try Phikit.run("inspect", "--jsno")
        #expect(r.status == 64)
        #expect(r.stderr.contains("error: unknown option '--jsno'"))
        #expect(r.stderr.contains("hint: did you mean '--json'?"))
    }

    @Test func unknownGlobalOption() throws {
        let r = try Phikit.run("--verison")
        #expect(r.status == 64)
        #expect(r.stderr.contains("hint: did you mean '--version'?"))
    }

    @Test func missingValue() throws {
        let r = try Phikit.run("run", "phi-3.5-mini", "-m")
        #expect(r.status == 64)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("error: missing value for option '-m'"))
        #expect(r.stderr.contains("usage: phikit run"))
    }

    @Test func optionValueThatLooksLikeAFlagIsMissing() throws {
        let r = try Phikit.run("pull", "m", "--revision", "--dry-run")
        #expect(r.status == 64)
        #expect(r.stderr.contains("missing value for option '--revision'"))
    }

    @Test func badNumber() throws {
        let r = try Phikit.run("run", "phi-3.5-mini", "--temp", "hot")
        #expect(r.status == 64)
        #expect(r.stderr.contains("error: invalid value 'hot' for '--temp': expected a number"))
    }

    @Test func missingPositional() throws {
        let r = try Phikit.run("inspect")
        #expect(r.status == 64)
        #expect(r.stderr.contains("error: missing argument <model>"))
        #expect(r.stderr.contains("usage: phikit inspect <model> [--ctx <n>] [--json]"))
    }

    @Test func extraPositional() throws {
        let r = try Phikit.run("rm", "a", "b")
        #expect(r.status == 64)
        #expect(r.stderr.contains("error: unexpected argument 'b'"))
    }

    @Test func flagGivenAValue() throws {
        let r = try Phikit.run("list", "--json=yes")
        #expect(r.status == 64)
        #expect(r.stderr.contains("option '--json' does not take a value"))
    }

    @Test("after --, a dash-led word is the positional: verify looks for that model")
    func dashLedPositional() throws {
        let r = try Phikit.run(["verify", "--", "-dir-with-dash"])
        #expect(r.status == 66)
        #expect(r.stderr.hasPrefix("error: '-dir-with-dash' is not a directory"))
        #expect(!r.stderr.contains("usage:"))
    }

    @Test func colourOnlyOnATerminal() throws {
        // stderr is a pipe here, so even without NO_COLOR there are no escape codes.
        let r = try Phikit.run(["inspect"], environment: ["NO_COLOR": ""])
        #expect(!r.stderr.contains("\u{1B}["))
    }
}
