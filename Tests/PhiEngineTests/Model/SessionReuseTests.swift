import CKernels
import Foundation
import Synchronization
import PhiFormats
import Testing

@testable import PhiEngine

/// A session that lives across turns: `prepare` reuses the cached prefix of a new sequence,
/// and what it computes is bit for bit what a fresh session computes (the promise `chat` and
/// the server's prompt cache rest on). Both shapes, float and 4-bit; the tiny Phi-3.5 model
/// switches LongRoPE factors past 32 positions.
@Suite("inference session reuse")
struct SessionReuseTests {
    /// Both Phi-3 shapes, a llama one and the phi (Phi-2) shape with qk_layernorm, float and
    /// 4-bit.
    static func models() throws -> [(String, TemporaryModel, any CausalLanguageModel)] {
        let phi3: [(String, TemporaryModel, any CausalLanguageModel)] =
            try ["tiny-phi35.json", "tiny-phi4mini.json", "tiny-llama-smol.json"].flatMap { name in
                let (f, float) = try SessionTests.floatModel(name)
                let (q, quantized) = try SessionTests.quantizedModel(name)
                return [(name + " float", f, float), (name + " 4-bit", q, quantized)]
            }
        let f = try TinyPhiTests.write("phi15qk")
        let q = try TinyModels.writeQuantized(
            from: f.path,
            quantization: .object([("group_size", .int(32)), ("bits", .int(4)),
                ("mode", .string("affine"))]))
        return phi3 + [
            ("phi15qk float", f, try PhiModel.load(directory: f.path)),
            ("phi15qk 4-bit", q, try PhiModel.load(directory: q.path)),
        ]
    }

    /// Greedy continuation of what the session holds, by decode steps.
    static func decode(_ session: InferenceSession, count: Int) throws -> [Int] {
        var out: [Int] = []
        var logits = session.logits
        for _ in 0..<count {
            let next = argmax(logits)
            out.append(next)
            logits = try session.step(next)
        }
        return out
    }

    static func fresh(
        _ model: any CausalLanguageModel, _ sequence: [Int], _ width: KVCacheWidth = .float32
    ) throws -> [Float] {
        let session = try InferenceSession(model: model, cacheWidth: width)
        return try withExtendedLifetime(session) { Array(try session.prefill(sequence)) }
    }

    @Test("turn after turn, prepare's logits equal a fresh prefill of the whole sequence")
    func turnsEqualFreshPrefill() throws {
        for (label, _, model) in try Self.models() {
            let session = try InferenceSession(model: model)
            var conversation = [1, 17, 25, 9, 300, 41]
            var reusedSome = false
            for turn in 0..<4 {
                // a reply by decode steps, then the next "user message"
                let reused = try session.prepare(conversation)
                let fresh = try Self.fresh(model, conversation)
                let diff = zip(Array(session.logits), fresh).map { abs($0 - $1) }.max()!
                let equal = Array(session.logits) == fresh
                #expect(
                    equal,
                    "\(label) turn \(turn) reused \(reused) of \(conversation.count) diff \(diff)")
                let reply = try Self.decode(session, count: 5)
                conversation += reply + [3 + turn, 40 + turn, 77]
                reusedSome = reusedSome || reused > 0
            }
            #expect(reusedSome, "\(label)")
        }
    }

    @Test("prepare reuses the longest common prefix, decoded positions included")
    func reusesCommonPrefix() throws {
        let (_, model) = try SessionTests.quantizedModel("tiny-phi4mini.json")
        let session = try InferenceSession(model: model)
        let prompt = [1, 5, 6, 7, 8, 9]
        #expect(try session.prepare(prompt) == 0)
        let reply = try Self.decode(session, count: 4)
        #expect(session.position == prompt.count + 4)
        let next = prompt + reply + [10, 11]
        #expect(try session.prepare(next) == prompt.count + 4)
        // a sequence that leaves the cached one early reuses only the common part
        #expect(try session.prepare(Array(next.prefix(4)) + [50, 51, 52]) == 4)
        // the same sequence again: everything but the last token
        let again = session.tokens
        #expect(try session.prepare(again) == again.count - 1)
        #expect(Array(session.logits) == (try Self.fresh(model, again)))
    }

    @Test(
        "16- and 8-bit caches: reuse stays exact, logits near float32's",
        arguments: [KVCacheWidth.float16, .int8])
    func narrowCache(_ width: KVCacheWidth) throws {
        for (label, _, model) in try Self.models() {
            // 48 positions: 8-bit keys calibrate on the first 32 (pk_attention.h), so the turns
            // below reuse a prefix short of them, then one past them.
            let sequence = (0..<48).map { ($0 * 41 + 7) % 380 + 3 }
            let narrow = try InferenceSession(model: model, cacheWidth: width)
            #expect(try narrow.prepare(Array(sequence.prefix(20))) == 0)
            let reply = try Self.decode(narrow, count: 3)
            let turn = Array(sequence.prefix(20)) + reply + Array(sequence[30..<44])
            // the tiny Phi-3 models switch LongRoPE factors past 32 positions: all recomputed
            #expect(try narrow.prepare(turn) == (label.hasPrefix("tiny-phi") ? 0 : 23))
            #expect(Array(narrow.logits) == (try Self.fresh(model, turn, width)), "\(label)")
            let next = turn + (try Self.decode(narrow, count: 2)) + [9, 10]
            #expect(try narrow.prepare(next) == turn.count + 2)
            #expect(Array(narrow.logits) == (try Self.fresh(model, next, width)), "\(label)")
            let reference = try Self.fresh(model, sequence)
            let narrowLogits = try Self.fresh(model, sequence, width)
            let spread = reference.max()! - reference.min()!
            let worst = zip(narrowLogits, reference).map { abs($0 - $1) }.max()!
            // measured here (6 models, 48 positions): 16-bit 4.8e-5 to 7.2e-4 of the spread,
            // 8-bit 1.0e-3 to 1.15e-2 (float64 fidelity at length: scripts/bench/README.md)
            let bound: Float = width == .float16 ? 3e-3 : 3e-2
            #expect(worst < bound * spread, "\(label): \(worst) of \(spread)")
        }
    }

    @Test("crossing the LongRoPE switch recomputes everything, still equal to a fresh run")
    func longRopeSwitch() throws {
        let (_, model) = try SessionTests.quantizedModel("tiny-phi35.json")
        let session = try InferenceSession(model: model)
        let short = Array(SessionTests.tokens.prefix(20))
        #expect(try session.prepare(short) == 0)
        let long = SessionTests.tokens  // 45 > original_max_position_embeddings (32)
        #expect(try session.prepare(long) == 0)
        #expect(Array(session.logits) == (try Self.fresh(model, long)))
        // back under the switch: the long-factor cache is useless again
        #expect(try session.prepare(short) == 0)
        #expect(Array(session.logits) == (try Self.fresh(model, short)))
    }

    @Test("a refused sequence leaves the session as it was")
    func refusalKeepsState() throws {
        let (_, model) = try SessionTests.floatModel("tiny-phi4mini.json")
        let session = try InferenceSession(model: model, maxContext: 16)
        _ = try session.prepare([1, 2, 3, 4])
        #expect(throws: SessionError.contextFull(needed: 17, limit: 16)) {
            try session.prepare(Array(repeating: 5, count: 17))
        }
        #expect(throws: SessionError.tokenOutOfRange(token: 999, vocabularySize: 400)) {
            try session.prepare([1, 2, 999])
        }
        #expect(throws: SessionError.emptyPrompt) { try session.prepare([]) }
        #expect(session.tokens == [1, 2, 3, 4])
    }

    @Test("a cancelled token stops generation after the current token")
    func cancellation() throws {
        let (_, model) = try SessionTests.floatModel("tiny-phi4mini.json")
        let session = try InferenceSession(model: model)
        let cancel = CancellationToken()
        var seen = 0
        var parameters = GenerationParameters.greedy(maxTokens: 50)
        parameters.ignoreEOS = true
        let outcome = try generate(
            session: session, sequence: [1, 2, 3], parameters: parameters,
            stopTokens: StopTokens(), cancel: cancel
        ) { _ in
            seen += 1
            if seen == 3 { cancel.cancel() }
            return .more
        }
        #expect(outcome.tokens.count == 3 && outcome.stopReason == .cancelled)
        // a fresh token for the next job: the old one stays cancelled, the session works on
        let next = try generate(
            session: session, sequence: [1, 2, 3] + outcome.tokens + [4, 5],
            parameters: parameters, stopTokens: StopTokens(), cancel: CancellationToken()
        ) { _ in .more }
        // the prompt and the two tokens fed before the cancel are reused
        #expect(next.tokens.count == 50 && next.reusedPromptTokens == 5)
    }

    @Test("sessions on the shared pool, used from several threads at once, compute alone")
    func sharedPoolConcurrency() throws {
        let (_, model) = try SessionTests.quantizedModel("tiny-phi4mini.json")
        let prompts = (0..<4).map { k in (0..<(10 + 3 * k)).map { ($0 * 31 + k * 7) % 390 + 3 } }
        let alone = try prompts.map { prompt -> [Int] in
            let session = try InferenceSession(model: model)
            _ = try session.prefill(prompt)
            return try Self.decode(session, count: 8)
        }
        let results = Mutex<[Int: [Int]]>([:])
        DispatchQueue.concurrentPerform(iterations: prompts.count) { k in
            let tokens = try? { () throws -> [Int] in
                let session = try InferenceSession(model: model)
                _ = try session.prefill(prompts[k])
                return try Self.decode(session, count: 8)
            }()
            results.withLock { $0[k] = tokens }
        }
        for k in prompts.indices { #expect(results.withLock { $0[k] } == alone[k]) }
        #expect(try WorkerPool.shared() === WorkerPool.shared(threads: 1))
    }
}

/// Decode steps of several sessions as one forward pass equal each session stepped alone,
/// bit for bit: a server's batch changes nobody's answer.
@Suite("decode batch")
struct DecodeBatchTests {
    @Test(
        "a batch of sessions, joining and leaving, steps each exactly as alone",
        arguments: KVCacheWidth.allCases)
    func batchEqualsAlone(_ width: KVCacheWidth) throws {
        for (label, _, model) in try SessionReuseTests.models() {
            let pool = try WorkerPool.shared()
            // 24 to 39 tokens and 6 steps: 8-bit keys calibrate at 32 (pk_attention.h) in the
            // prompt for some, in a decode step for others
            let prompts = (0..<4).map { k in (0..<(24 + 5 * k)).map { ($0 * 29 + k * 13) % 380 + 3 } }
            // alone: prompt, then 6 greedy decode steps, logits kept after each
            let alone = try prompts.map { prompt -> [[Float]] in
                let session = try InferenceSession(
                    model: model, maxContext: nil, pool: pool, block: 512, cacheWidth: width)
                _ = try session.prefill(prompt)
                return try (0..<6).map { _ in
                    let next = argmax(session.logits)
                    return Array(try session.step(next))
                }
            }
            let batch = try DecodeBatch(model: model, maxSequences: 4, pool: pool)
            let sessions = try prompts.map { prompt in
                let session = try InferenceSession(
                    model: model, maxContext: nil, pool: pool, block: 512, cacheWidth: width)
                _ = try session.prefill(prompt)
                return session
            }
            // session k joins at step k and leaves after its sixth step
            var done = [Int](repeating: 0, count: 4)
            var seen = [[[Float]]](repeating: [], count: 4)
            for stepIndex in 0..<9 {
                let active = (0..<4).filter { $0 <= stepIndex && done[$0] < 6 }
                guard !active.isEmpty else { break }
                try batch.step(
                    active.map { sessions[$0] }, tokens: active.map { argmax(sessions[$0].logits) })
                for k in active {
                    seen[k].append(Array(sessions[k].logits))
                    done[k] += 1
                }
            }
            for k in 0..<4 { #expect(seen[k] == alone[k], "\(label) \(width) session \(k)") }
        }
    }
}

