import Testing

@testable import PhiServer

/// Issue 27: error bodies carried the server's absolute paths (the HF cache, the home folder).
@Suite("error text for clients")
struct ErrorTextTests {
    let text = ErrorText(modelDirectory: "/home/me/.cache/hub/models--o--m/snapshots/abc", modelID: "m")

    @Test("paths in the model's directory become the model's name")
    func modelDirectory() {
        #expect(
            text.redact("chat template /home/me/.cache/hub/models--o--m/snapshots/abc/chat_template.jinja, line 3: boom")
                == "chat template m/chat_template.jinja, line 3: boom")
        #expect(
            text.redact("cannot open '/home/me/.cache/hub/models--o--m/snapshots/abc': gone")
                == "cannot open 'm': gone")
    }

    @Test("any other absolute path is cut to its file name; a lone /name stays")
    func otherPaths() {
        #expect(
            text.redact("cannot read '/var/lib/blobs/1234abcd' (from /etc/x.json)")
                == "cannot read '1234abcd' (from x.json)")
        #expect(text.redact("1/2 of /root") == "1/2 of /root")
    }
}
