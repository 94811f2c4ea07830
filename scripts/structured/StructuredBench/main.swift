// structured-bench: the cost of structured output's token masks on a real tokenizer.
//
//     structured-bench TOKENIZER_JSON SCHEMAS_JSON [--paths-out FILE] [--sample N]
//
// For every suite schema (Tests/PhiEngineTests/Fixtures/structured/schemas.json) the compact
// instance is tokenized and followed token by token; each step's mask is timed (a fresh
// matcher per schema: cold caches, as in a real answer) and must allow the next token.
// --paths-out writes the token paths so that bench_references.py times llguidance and
// xgrammar on exactly the same steps. --sample N instead generates N answers per schema
// choosing uniformly among allowed tokens (a model with random weights) and prints them as
// JSON lines for check_outputs.py.
import Foundation
import PhiEngine
import PhiFormats
import PhiText

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(1)
}

/// This thread's CPU time: the machine is shared, and wall time would count other
/// processes' turns (bench_references.py measures the references the same way).
func now() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var pathsOut: String? = nil
var samples = 0
if let i = arguments.firstIndex(of: "--paths-out"), i + 1 < arguments.count {
    pathsOut = arguments[i + 1]
    arguments.removeSubrange(i...(i + 1))
}
if let i = arguments.firstIndex(of: "--sample"), i + 1 < arguments.count {
    samples = Int(arguments[i + 1]) ?? 0
    arguments.removeSubrange(i...(i + 1))
}
guard arguments.count == 2 else { fail("usage: structured-bench TOKENIZER_JSON SCHEMAS_JSON") }

let tokenizer: Tokenizer
do {
    tokenizer = try Tokenizer(
        tokenizerJSON: Array(try Data(contentsOf: URL(fileURLWithPath: arguments[0]))),
        source: arguments[0])
} catch { fail("\(error)") }
let suite: [JSONValue]
do {
    suite = try JSONValue(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: arguments[1]))))
        .arrayValue ?? []
} catch { fail("\(error)") }

var start = now()
let pieces = tokenizer.tokenPieces()
let vocabulary = TokenVocabulary(pieces: pieces)
let vocabularyMS = Double(now() - start) / 1e6
FileHandle.standardError.write(
    Data("vocabulary: \(vocabulary.size) tokens, built in \(String(format: "%.0f", vocabularyMS)) ms\n".utf8))

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

if samples > 0 {
    // Random answers: uniform over the allowed tokens, an end when the grammar may end
    // (one chance in four, as a stand-in for the end token's probability).
    var rng = SystemRandomNumberGenerator()
    for entry in suite {
        let name = entry["name"]?.stringValue ?? "?"
        let grammar: Grammar
        do { grammar = try OutputFormat.jsonSchema(entry["schema"]!).compile() } catch { fail("\(name): \(error)") }
        for _ in 0..<samples {
            let matcher = GrammarMatcher(grammar: grammar, vocabulary: vocabulary)
            var bytes: [UInt8] = []
            var finished = false
            for _ in 0..<400 {
                if matcher.isComplete || (matcher.canEnd && Int.random(in: 0..<4, using: &rng) == 0) {
                    finished = true
                    break
                }
                let allowed = matcher.allowedTokenIDs()
                guard let token = allowed.randomElement(using: &rng) else { break }
                do { try matcher.advance(token) } catch { fail("\(name): \(error)") }
                bytes += vocabulary.piece(token)!
            }
            let line: JSONValue = .object([
                ("name", .string(name)), ("text", .string(String(decoding: bytes, as: UTF8.self))),
                ("finished", .bool(finished)),
            ])
            print(line.serialized())
        }
    }
    exit(0)
}

// STRUCTURED_BENCH_STEPS=1: each step's time, allowed count and next token on stderr.
let printSteps = ProcessInfo.processInfo.environment["STRUCTURED_BENCH_STEPS"] != nil
var all: [Double] = []
var paths: [JSONValue] = []
var compileTimes: [Double] = []
print("schema                      tokens  compile ms  mask median ms  mask max ms")
for entry in suite {
    let name = entry["name"]?.stringValue ?? "?"
    guard let text = entry["cases"]?.arrayValue?.first?.arrayValue?.first?.stringValue else { continue }
    let tokens: [Int]
    do { tokens = try tokenizer.encode(text, addSpecialTokens: false) } catch { fail("\(name): \(error)") }
    start = now()
    let grammar: Grammar
    do { grammar = try OutputFormat.jsonSchema(entry["schema"]!).compile() } catch { fail("\(name): \(error)") }
    let matcher = GrammarMatcher(grammar: grammar, vocabulary: vocabulary)
    let compileMS = Double(now() - start) / 1e6
    compileTimes.append(compileMS)
    var mask = TokenMask(vocabularySize: vocabulary.size)
    var times: [Double] = []
    for token in tokens {
        mask.forbidAll()
        let t0 = now()
        matcher.allow(&mask)
        times.append(Double(now() - t0) / 1e6)
        if ProcessInfo.processInfo.environment["STRUCTURED_BENCH_WARM_WALKS"] != nil {
            // The same walk again over built transitions: what the walk itself costs.
            matcher.dropCachedMasks()
            mask.forbidAll()
            let t1 = now()
            matcher.allow(&mask)
            times[times.count - 1] = Double(now() - t1) / 1e6
        }
        if printSteps {
            let next = String(decoding: vocabulary.piece(token) ?? [], as: UTF8.self).debugDescription
            FileHandle.standardError.write(
                Data("step \(name) \(times.count - 1) \(String(format: "%.3f", times.last!)) ms allowed=\(mask.allowedCount) next=\(next)\n".utf8))
        }
        guard mask[token] else { fail("\(name): token \(token) of the instance is not allowed") }
        do { try matcher.advance(token) } catch { fail("\(name): \(error)") }
    }
    guard matcher.canEnd else { fail("\(name): the instance does not complete the grammar") }
    all += times
    let sorted = times.sorted()
    print(
        name.padding(toLength: 28, withPad: " ", startingAt: 0)
            + String(format: "%6d  %10.2f  %14.3f  %11.3f", tokens.count, compileMS, percentile(sorted, 0.5), sorted.last ?? 0))
    paths.append(
        .object([
            ("name", .string(name)), ("schema", entry["schema"]!), ("tokens", .array(tokens.map { .int($0) })),
            ("phikit_mask_ms", .array(times.map { .double($0) })),
        ]))
}
let sorted = all.sorted()
print("trie nodes: \(vocabulary.trieNodeCount)")
print(
    String(
        format: "phikit: %d steps over %d schemas: mask median %.3f ms, p90 %.3f ms, p99 %.3f ms, worst %.3f ms; mean %.3f ms; compile median %.2f ms",
        sorted.count, paths.count, percentile(sorted, 0.5), percentile(sorted, 0.9), percentile(sorted, 0.99),
        sorted.last ?? 0, sorted.reduce(0, +) / Double(max(1, sorted.count)), percentile(compileTimes.sorted(), 0.5)))
if let pathsOut {
    do {
        try Data(JSONValue.array(paths).serialized().utf8).write(to: URL(fileURLWithPath: pathsOut))
    } catch { fail("cannot write \(pathsOut): \(error)") }
}
