import Foundation
import PhiFormats
import TestSupport
import Testing

@testable import PhiKit

/// Added tokens' lstrip/rstrip, which GGUF does not store, come back where the metadata says
/// so (llama.cpp's rules): for a file named Phi-3, exactly as Phi-3.5's own tokenizer.json has
/// them; for any other name, nowhere.
@Suite struct GGUFTokenStripTests {
    /// Phi-3.5-mini's added tokens, typed as llama.cpp's converter types them (special →
    /// control, `<unk>` unknown, the non-special `</s>` user-defined), plus two normal pieces.
    static func phi35Vocabulary() throws -> (tokens: [String], types: [Int], flags: [String: (Bool, Bool)]) {
        let url = try TestPaths.sharedURL("microsoft--Phi-3.5-mini-instruct/tokenizer.json")
        // Foundation's parser: the vocabulary repeats keys (NFC/NFD twins) that JSONValue refuses.
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var tokens = ["a", "b"]
        var types = [1, 1]
        var flags: [String: (Bool, Bool)] = [:]
        for t in try #require(json["added_tokens"] as? [[String: Any]]) {
            let content = try #require(t["content"] as? String)
            tokens.append(content)
            let special = t["special"] as? Bool == true
            types.append(content == "<unk>" ? 2 : special ? 3 : 4)
            flags[content] = (t["lstrip"] as? Bool == true, t["rstrip"] as? Bool == true)
        }
        return (tokens, types, flags)
    }

    static func tokenizer(name: String, tokens: [String], types: [Int]) throws -> JSONValue {
        var b = GGUFBuilder()
        b.add("general.architecture", .string("phi3"))
        b.add("general.name", .string(name))
        b.add("tokenizer.ggml.model", .string("llama"))
        b.add("tokenizer.ggml.tokens", .array(GGUFArray(elementType: .string, values: tokens.map { .string($0) })))
        b.add("tokenizer.ggml.scores", .array(GGUFArray(elementType: .float32, values: tokens.map { _ in .float32(0) })))
        b.add("tokenizer.ggml.token_type", .array(GGUFArray(elementType: .int32, values: types.map { .int32(Int32($0)) })))
        let bytes = b.bytes()
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 64)
        defer { copy.deallocate() }
        copy.copyBytes(from: bytes)
        let file = try GGUFFile(bytes: UnsafeRawBufferPointer(copy), path: "t.gguf")
        return try GGUFTokenizer(file, contextLength: 4096).tokenizerJSON
    }

    static func flags(_ tokenizer: JSONValue) -> [String: (Bool, Bool)] {
        var out: [String: (Bool, Bool)] = [:]
        for t in tokenizer["added_tokens"]?.arrayValue ?? [] {
            out[t["content"]?.stringValue ?? ""] = (t["lstrip"]?.boolValue == true, t["rstrip"]?.boolValue == true)
        }
        return out
    }

    @Test(arguments: ["Phi3", "Phi-3.5-mini-instruct"])
    func phi3NamedFileStripsAsPhi3sTokenizerJSON(_ name: String) throws {
        let v = try Self.phi35Vocabulary()
        let got = Self.flags(try Self.tokenizer(name: name, tokens: v.tokens, types: v.types))
        #expect(got.count == v.flags.count)
        #expect(v.flags.values.contains { $0.1 } && v.flags.values.contains { !$0.1 })
        for (content, want) in v.flags {
            let have = try #require(got[content], "\(content) is not an added token")
            #expect(have == want, "\(content): lstrip/rstrip \(have), Phi-3.5 says \(want)")
        }
    }

    @Test func otherNamesStripNothing() throws {
        let v = try Self.phi35Vocabulary()
        let got = Self.flags(try Self.tokenizer(name: "Phi 3.5 Mini Instruct", tokens: v.tokens, types: v.types))
        #expect(got.count == v.flags.count)
        #expect(got.values.allSatisfy { !$0.0 && !$0.1 })
    }
}
