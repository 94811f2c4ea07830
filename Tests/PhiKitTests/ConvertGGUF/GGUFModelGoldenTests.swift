import Foundation
import PhiEngine
import PhiFormats
import Testing

@testable import PhiKit

/// Tiny Phi-3.5- and Phi-4-mini-shaped models that llama.cpp itself quantized (Q8_0, Q4_0,
/// Q4_1, Q5_0, Q5_1, Q4_K_M; Fixtures/gguf/models, made by scripts/gguf/make_model_goldens.py),
/// and Phi-2-shaped phi2 files, q/k/v separate and fused (make_phi2_goldens.py), converted by
/// phikit:
/// - every exactly transcoded tensor, read back as scale*q + bias in float32, hashes the same
///   as gguf.quants.dequantize's values; the re-quantized ones (Q6_K) are no worse than mlx's
///   own 8-bit g32 quantization of those values;
/// - greedy decoding follows a float64 forward pass over the stored values (each token the
///   reference argmax, or a near-tie, after which the contexts differ and the walk stops),
///   and equals llama.cpp's greedy tokens as far as llama.cpp agrees with that reference.
@Suite struct GGUFModelGoldenTests {
    static let directory = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/gguf/models")
    /// goldens.json (phi3 and llama files) and phi2-goldens.json (scripts/gguf/
    /// make_phi2_goldens.py), in the same form.
    static let goldenSets: [JSONValue] = ["goldens.json", "phi2-goldens.json"].map {
        try! JSONValue(parsing: [UInt8](Data(contentsOf: directory.appendingPathComponent($0))))
    }
    static let files: [String] = goldenSets.flatMap { $0["files"]?.arrayValue ?? [] }
        .compactMap { $0["file"]?.stringValue }
    /// As in the engine's float64 oracle tests: a fraction of the step's logit spread. A file
    /// with re-quantized tensors (Q6_K → 8-bit) is not the stored weights to the bit, so its
    /// logits may move more: phi4minik-Q4_K_M's 8-bit tied embedding turns a gap of 2.6e-3 of
    /// the spread at token 17.
    static let nearTie = 1e-3
    static let nearTieRequantized = 1e-2

    /// The file's golden entry and the set it belongs to (for its prompt).
    static func entry(_ file: String) throws -> (JSONValue, set: JSONValue) {
        for set in goldenSets {
            if let e = set["files"]?.arrayValue?.first(where: { $0["file"]?.stringValue == file }) {
                return (e, set)
            }
        }
        throw GGUFConvertError.missingTensor(path: file, tensor: "(no golden entry)")
    }

    static func convert(_ file: String, maxShardSize: Int? = nil) throws -> (URL, GGUFConvertSummary) {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-gguf-model-\(UUID().uuidString)")
        var options = ConvertOptions(
            source: directory.appendingPathComponent(file).path, output: dir.path)
        if let maxShardSize { options.maxShardSize = maxShardSize }
        return (dir, try convertGGUF(options))
    }

    /// Every tensor's bytes, over all the weight files of a converted model.
    static func tensorBytes(_ dir: URL) throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        for f in try FileManager.default.contentsOfDirectory(atPath: dir.path) where f.hasSuffix(".safetensors") {
            let st = try SafeTensorsFile(path: dir.appendingPathComponent(f).path)
            for t in st.tensors { out[t.name] = Array(st.data(t)) }
        }
        return out
    }

    /// Small shards put a module's weight and its scales/biases in different files.
    @Test func shardsSplitModulesAndKeepEveryTensor() throws {
        let (whole, _) = try Self.convert("phi35-Q4_0.gguf")
        defer { try? FileManager.default.removeItem(at: whole) }
        let (sharded, _) = try Self.convert("phi35-Q4_0.gguf", maxShardSize: 7000)
        defer { try? FileManager.default.removeItem(at: sharded) }
        let files = try FileManager.default.contentsOfDirectory(atPath: sharded.path)
        #expect(files.filter { $0.hasSuffix(".safetensors") }.count > 5)
        #expect(files.contains("model.safetensors.index.json"))
        #expect(try Self.tensorBytes(sharded) == Self.tensorBytes(whole))
    }

    /// The same Phi-2 weights stored with q/k/v fused (attn_qkv) and separate convert to the
    /// same bytes: llama.cpp quantizes row by row, and the split takes whole rows.
    @Test func fusedPhi2QKVSplitsIntoTheSeparateTensors() throws {
        let (separate, _) = try Self.convert("phi2-Q4_0.gguf")
        defer { try? FileManager.default.removeItem(at: separate) }
        let (fused, _) = try Self.convert("phi2fused-Q4_0.gguf")
        defer { try? FileManager.default.removeItem(at: fused) }
        let a = try Self.tensorBytes(separate)
        #expect(a["model.layers.1.self_attn.k_proj.bias"] != nil && a["model.layers.1.self_attn.v_proj.scales"] != nil)
        #expect(try Self.tensorBytes(fused) == a)
    }

    /// phi3's fused module → the llama modules whose rows it stacks.
    static let llamaParts = ["qkv_proj": ["q_proj", "k_proj", "v_proj"], "gate_up_proj": ["gate_proj", "up_proj"]]

    /// A converted tensor's values as float32: affine ones as scale*q + bias in float32 (what
    /// gguf.quants.dequantize computes for the exact block types), float ones widened.
    static func values(_ st: SafeTensorsFile, _ name: String, bits: Int) throws -> [Float] {
        // An output matrix equal to the embeddings is written once (tie_word_embeddings).
        let name = st.info(name) == nil && name == "lm_head.weight" ? "model.embed_tokens.weight" : name
        let t = try #require(st.info(name))
        let base = String(name.dropLast(".weight".count))
        guard name.hasSuffix(".weight"), let s = st.info(base + ".scales"),
            let b = st.info(base + ".biases")
        else {
            var out = [Float](repeating: 0, count: t.shape.reduce(1, *))
            out.withUnsafeMutableBufferPointer { widen(st.data(t), t.dtype, into: $0) }
            return out
        }
        func floats(_ i: TensorInfo) -> [Float] {
            var out = [Float](repeating: 0, count: i.shape.reduce(1, *))
            out.withUnsafeMutableBufferPointer { widen(st.data(i), i.dtype, into: $0) }
            return out
        }
        let scales = floats(s)
        let biases = floats(b)
        let raw = st.data(t)
        let words = (0..<raw.count / 4).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self) }
        let rows = t.shape[0]
        let cols = t.shape[1] * 32 / bits
        let group = cols / s.shape[1]
        var out = [Float](repeating: 0, count: rows * cols)
        for r in 0..<rows {
            for c in 0..<cols {
                let bit = (r * t.shape[1]) * 32 + c * bits
                var q = UInt64(words[bit / 32]) >> UInt64(bit % 32)
                if bit % 32 + bits > 32 { q |= UInt64(words[bit / 32 + 1]) << UInt64(32 - bit % 32) }
                let g = r * s.shape[1] + c / group
                let code = Float(q & ((1 << UInt64(bits)) - 1))
                out[r * cols + c] = scales[g] * code + biases[g]
            }
        }
        return out
    }

    @Test(arguments: files)
    func convertsExactlyAndDecodesLikeTheReference(_ file: String) throws {
        let (golden, set) = try Self.entry(file)
        let (dir, summary) = try Self.convert(file)
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try JSONValue(
            parsing: [UInt8](Data(contentsOf: dir.appendingPathComponent("config.json"))))
        let st = try SafeTensorsFile(path: dir.appendingPathComponent("model.safetensors").path)
        let tensors = try #require(golden["tensors"]?.objectValue)
        let inexact = Dictionary(uniqueKeysWithValues: summary.inexact.map { ($0.tensor, $0) })
        for (name, want) in tensors {
            let base = String(name.dropLast(".weight".count))
            if let mlxError = want["mlx_error"]?.doubleValue {
                let got = try #require(inexact[want["gguf"]?.stringValue ?? ""], "\(name) (\(want["type"]?.stringValue ?? "")) is not reported inexact")
                #expect(got.maxAbsError <= mlxError * 1.001 + 1e-9, "\(name): error \(got.maxAbsError), mlx's \(mlxError)")
                continue
            }
            #expect(inexact[want["gguf"]?.stringValue ?? ""] == nil, "\(name) should be exact")
            // The goldens name phi3's fused modules; a llama file converts to the llama layout,
            // whose separate projections are those rows in order (q, k, v; gate, up).
            let parts = st.info(name) == nil ? Self.llamaParts[String(base.split(separator: ".").last!)] : nil
            let prefix = base.split(separator: ".").dropLast().joined(separator: ".")
            let names = parts?.map { "\(prefix).\($0).weight" } ?? [name]
            var v: [Float] = []
            for part in names {
                let partBase = String(part.dropLast(".weight".count))
                let bits = config["quantization"]?[partBase]?["bits"]?.intValue
                    ?? config["quantization"]?["bits"]?.intValue ?? 0
                v += try Self.values(st, part, bits: bits).map { $0 + 0 }  // -0.0 as +0.0, as the golden
            }
            let hash = v.withUnsafeBytes { SHA256Hasher.hex(of: $0) }
            #expect(hash == want["sha256"]?.stringValue, "\(name) (\(want["type"]?.stringValue ?? "")) differs from gguf.quants.dequantize")
        }

        let prompt = try #require(set["prompt"]?.arrayValue).compactMap(\.intValue)
        let reference = try #require(golden["reference"]?.arrayValue).compactMap(\.intValue)
        let steps = try #require(golden["steps"]?.arrayValue)
        // By config.json's model_type: phi3, llama or phi, as the GGUF's architecture.
        let session = try InferenceSession(model: try ModelArchitectures.load(directory: dir.path))
        var logits = try session.prefill(prompt)
        var tokens: [Int] = []
        for i in 0..<reference.count {
            var best = 0
            for j in logits.indices where logits[j] > logits[best] { best = j }
            tokens.append(best)
            if i + 1 < reference.count { logits = try session.step(best) }
        }
        let tie = summary.inexact.isEmpty ? Self.nearTie : Self.nearTieRequantized
        var followed = reference.count
        for (i, token) in tokens.enumerated() where token != reference[i] {
            let top = steps[i]["top"]?.arrayValue ?? []
            let logit = { (id: Int) in
                top.first { $0.arrayValue?.first?.intValue == id }?.arrayValue?.last?.doubleValue
            }
            let spread = steps[i]["spread"]?.doubleValue ?? 0
            let gap = logit(reference[i]).flatMap { r in logit(token).map { r - $0 } }
            #expect(gap.map { $0 <= tie * spread } == true,
                    "\(file) token \(i): phikit \(token), reference \(reference[i])")
            followed = i
            break  // contexts differ from here on
        }
        let llama = try #require(golden["llama"]?.arrayValue).compactMap(\.intValue)
        let agrees = min(try #require(golden["llama_agrees"]?.intValue), followed)
        #expect(Array(tokens.prefix(agrees)) == Array(llama.prefix(agrees)), "\(file): llama.cpp's tokens")
        print("\(file): follows the float64 reference for \(followed) of \(reference.count) tokens; "
            + "llama.cpp agrees with it for \(golden["llama_agrees"]?.intValue ?? 0)")
    }
}
