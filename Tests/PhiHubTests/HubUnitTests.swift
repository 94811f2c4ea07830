import Foundation
import PhiFormats
import Testing

@testable import PhiHub

@Suite("Hub client pieces")
struct HubUnitTests {
    /// Expected values from Python's `fnmatch.fnmatchcase`, which huggingface_hub uses.
    @Test(
        "glob matching is Python's fnmatchcase",
        arguments: [
            ("model.safetensors", "model*.safetensors", true),
            ("model-00001-of-00002.safetensors", "model*.safetensors", true),
            ("sub/model.safetensors", "model*.safetensors", false),
            ("sub/config.json", "*.json", true), ("config.json", "*.json", true),
            ("Config.JSON", "*.json", false), ("tokenizer.model", "tokenizer.model", true),
            ("a.txt", "?.txt", true), ("ab.txt", "?.txt", false), ("x1", "x[0-9]", true),
            ("xa", "x[0-9]", false), ("xa", "x[!0-9]", true), ("x]", "x[]]", true),
            ("x[", "x[", true), ("x[a", "x[a", true), ("weights.bin", "*.safetensors", false),
            ("", "*", true), ("a", "*a*a", false), ("aaa", "*a*a", true),
            ("original/consolidated.pth", "original/*", true), ("x-y", "x[a-]y", true),
            ("x-y", "x[!-]y", false),
        ])
    func fnmatch(_ name: String, _ pattern: String, _ expected: Bool) {
        #expect(FilePatterns.fnmatch(name, pattern) == expected)
    }

    @Test("mlx-lm's default patterns; a trailing / selects a folder")
    func defaults() {
        let mlx = FilePatterns.mlxDefaults
        for yes in [
            "config.json", "model-00001-of-00002.safetensors", "tokenizer.model",
            "chat_template.jinja", "merges.txt", "modeling_phi3.py",
        ] {
            #expect(mlx.matches(yes), "\(yes)")
        }
        for no in ["README.md", "pytorch_model.bin", "consolidated.safetensors", "assets/logo.png"]
        {
            #expect(!mlx.matches(no), "\(no)")
        }
        let folder = FilePatterns(include: ["onnx/"], exclude: ["*.bin"])
        #expect(
            folder.matches("onnx/model.onnx") && !folder.matches("onnx/x.bin")
                && !folder.matches("config.json"))
    }

    @Test("repo paths that could leave the snapshot folder are named unsafe")
    func repoPaths() {
        for good in ["config.json", "a/b/c.json", "..hidden", "x..y/z"] {
            #expect(RepoPath.problem(good) == nil, "\(good)")
        }
        for bad in [
            "", "/abs", "a/../b", "..", "a\\b", "a//b", "a/", "./a", "c:x", "D:\\x", "a\u{0}b",
        ] {
            #expect(RepoPath.problem(bad) != nil, "\(bad)")
        }
        #expect(RepoPath.fileUsedAsFolder(["a", "a/b", "c"]) == "a/b")
        #expect(RepoPath.fileUsedAsFolder(["a/b", "a/c", "ab"]) == nil)
    }

    @Test("link targets climb out of snapshots/<commit> and every folder above the file")
    func linkTargets() {
        #expect(HubCache.linkTarget(path: "config.json", blobName: "x") == "../../blobs/x")
        #expect(HubCache.linkTarget(path: "a/b/c.json", blobName: "x") == "../../../../blobs/x")
    }

    @Test("Retry-After as seconds or an HTTP date; backoff doubles up to 8× the base")
    func retry() {
        #expect(RetryPolicy.retryAfterSeconds("7") == 7)
        #expect(RetryPolicy.retryAfterSeconds(" ") == nil)
        let now = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(RetryPolicy.retryAfterSeconds("Wed, 21 Oct 2015 07:28:30 GMT", now: now) == 30)
        var backoff = Backoff(RetryPolicy(maxAttempts: 6, baseDelay: 1, maxRetryAfter: 60))
        let delays = (0..<5).map { _ in backoff.next(retryAfter: nil) }
        #expect(
            delays == [
                .retry(after: 1), .retry(after: 2), .retry(after: 4), .retry(after: 8),
                .retry(after: 8),
            ])
        #expect(backoff.next(retryAfter: nil) == .giveUp)
        backoff.madeProgress()
        #expect(backoff.next(retryAfter: 90) == .waitTooLong(seconds: 90))
        #expect(backoff.next(retryAfter: 5) == .retry(after: 5))
        let env = RetryPolicy.from(environment: [
            "PHIKIT_RETRY_BASE_SECONDS": "0.01", "PHIKIT_RETRY_AFTER_MAX_SECONDS": "2",
        ])
        #expect(env.baseDelay == 0.01 && env.maxRetryAfter == 2 && env.maxAttempts == 6)
    }

    @Test("token: --token, then HF_TOKEN, then the token file; HF_HUB_OFFLINE truthiness")
    func configuration() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "hf_from_file\n".write(toFile: dir + "/token", atomically: true, encoding: .utf8)
        let env = ["HF_HOME": dir, "HF_TOKEN": "hf_from_env", "HF_ENDPOINT": "http://mirror:8080/"]
        let explicit = HubConfiguration.from(environment: env, token: "hf_flag")
        #expect(explicit.token == HubToken("hf_flag", source: .commandLine))
        #expect(explicit.endpoint == "http://mirror:8080")
        #expect(HubConfiguration.from(environment: env).token?.source == .environment("HF_TOKEN"))
        let file = HubConfiguration.from(environment: ["HF_HOME": dir]).token
        #expect(file == HubToken("hf_from_file", source: .file(dir + "/token")))
        let path = HubConfiguration.from(environment: [
            "HF_TOKEN_PATH": dir + "/token", "HF_TOKEN": " ",
        ])
        #expect(path.token?.value == "hf_from_file")
        #expect(
            HubConfiguration.from(environment: [
                "HF_HOME": dir, "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
            ]).token == nil)
        for (value, offline) in [
            ("1", true), ("yes", true), ("ON", true), ("0", false), ("", false),
        ] {
            #expect(
                HubConfiguration.from(environment: ["HF_HUB_OFFLINE": value]).offline == offline)
        }
        #expect(HubConfiguration.from(environment: ["TRANSFORMERS_OFFLINE": "1"]).offline)
        #expect(HubConfiguration.from(environment: [:]).endpoint == "https://huggingface.co")
        // The token never shows in a description or a reflection.
        let token = HubToken("hf_secret", source: .commandLine)
        #expect(
            !"\(token)".contains("hf_secret") && !String(reflecting: token).contains("hf_secret"))
    }

    @Test("URLs: escaping, origins, redirects, Link paging, Content-Range, ETags")
    func urls() {
        #expect(URLPath.escapePath("a b/c#d.json") == "a%20b/c%23d.json")
        #expect(URLPath.escapeSegment("refs/pr/1") == "refs%2Fpr%2F1")
        #expect(URLOrigin("http://127.0.0.1:8080/x") == URLOrigin("HTTP://127.0.0.1:8080/y"))
        #expect(URLOrigin("http://127.0.0.1:8080/x") != URLOrigin("http://127.0.0.1:8081/x"))
        #expect(URLOrigin("https://hf.co/x")?.port == 443)
        #expect(URLOrigin("file:///etc/passwd") == nil)
        #expect(URLOrigin.resolve(location: "/b?c", against: "http://h:1/a") == "http://h:1/b?c")
        #expect(URLOrigin.resolve(location: "ftp://h/x", against: "http://h:1/a") == nil)
        #expect(
            HubClient.nextPage(#"<https://h/api/tree?cursor=2>; rel="next""#, base: "https://h/api")
                == "https://h/api/tree?cursor=2")
        #expect(HubClient.nextPage(#"<https://h/x>; rel="prev""#, base: "https://h/") == nil)
        #expect(BlobWriter.contentRange("bytes 100-199/200")! == (100, 200))
        #expect(BlobWriter.contentRange("bytes 5-9/*")! == (5, nil))
        #expect(BlobWriter.contentRange("items 1-2/3") == nil)
        #expect(HubClient.normalizedETag(#"W/"abc""#) == "abc")
        #expect(HubClient.normalizedETag(#""def""#) == "def")
    }

    @Test("tree entries are checked: LFS info must be complete and agree with the size")
    func treeEntries() throws {
        let (oid, sha) = (String(repeating: "a", count: 40), String(repeating: "b", count: 64))
        func item(_ lfs: String) throws -> JSONValue {
            try JSONValue(
                parsing: Array(
                    #"{"type":"file","oid":"\#(oid)","size":3,"path":"w","lfs":\#(lfs)}"#.utf8))
        }
        let good = try item(#"{"oid":"\#(sha)","size":3,"pointerSize":130}"#)
        let entry = try HubClient.fileEntry(good, url: "u")
        #expect(entry.blobName == sha)
        let bad = try item(#"{"oid":"xyz","size":3}"#)
        #expect(throws: HubError.self) { try HubClient.fileEntry(bad, url: "u") }
        let noOid = try JSONValue(parsing: Array(#"{"type":"file","size":3,"path":"w"}"#.utf8))
        #expect(throws: HubError.self) { try HubClient.fileEntry(noOid, url: "u") }
    }
}

@Suite("Blob hasher")
struct BlobHasherTests {
    /// 9 MiB: above `threadedAbove`, so it is hashed on the hasher's own thread.
    static let bytes: [UInt8] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return [UInt8](unsafeUninitializedCapacity: 9 << 20) { buffer, count in
            for i in 0..<buffer.count {
                state = state &* 6_364_136_223_846_793_005 &+ 1
                buffer[i] = UInt8(truncatingIfNeeded: state >> 56)
            }
            count = buffer.count
        }
    }()

    /// Feeds `bytes` through the hasher's buffers in uneven pieces.
    func feed(_ hasher: BlobHasher, _ bytes: ArraySlice<UInt8>) {
        var offset = bytes.startIndex
        var piece = 70_000
        while offset < bytes.endIndex {
            let n = min(piece, bytes.endIndex - offset, BlobHasher.bufferSize)
            bytes[offset..<offset + n].withUnsafeBytes { hasher.buffer.copyMemory(from: $0) }
            hasher.commit(n)
            offset += n
            piece = piece * 3 % BlobHasher.bufferSize + 1
        }
    }

    /// An LFS entry as large as `bytes`.
    static let large = HubFileEntry(
        path: "w", size: bytes.count, blobID: "", lfs: .init(sha256: "", size: bytes.count))

    @Test("threaded (large LFS file) and inline (small file) give the one-shot hashes")
    func matchesOneShot() {
        let threaded = BlobHasher(Self.large)
        feed(threaded, Self.bytes[...])
        #expect(threaded.finish() == SHA256Hasher.hex(of: Self.bytes))
        #expect(threaded.cpuNanoseconds > 0)

        let small = Array(Self.bytes.prefix(300_000))
        let inline = BlobHasher(HubFileEntry(path: "c", size: small.count, blobID: ""))
        feed(inline, small[...])
        #expect(inline.finish() == GitBlobSHA1.hex(of: small))
    }

    @Test("reset forgets what was hashed; a stopped hasher can be dropped")
    func reset() {
        let entry = Self.large
        let hasher = BlobHasher(entry)
        feed(hasher, Self.bytes.prefix(4 << 20))
        hasher.reset(entry)
        feed(hasher, Self.bytes[...])
        #expect(hasher.finish() == SHA256Hasher.hex(of: Self.bytes))
        let abandoned = BlobHasher(entry)
        feed(abandoned, Self.bytes.prefix(3 << 20))
        abandoned.stop()
    }
}
