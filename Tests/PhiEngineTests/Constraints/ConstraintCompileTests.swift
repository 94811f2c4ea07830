import PhiFormats
import Testing

@testable import PhiEngine

/// What the compilers accept and refuse, checked through the automaton on whole strings.
@Suite("constraint compilers")
struct ConstraintCompileTests {
    static let bytesVocabulary = TokenVocabulary(pieces: (0..<256).map { [UInt8($0)] })

    func matcher(_ format: OutputFormat) throws -> GrammarMatcher {
        GrammarMatcher(grammar: try format.compile(), vocabulary: Self.bytesVocabulary)
    }

    func schema(_ text: String) throws -> GrammarMatcher {
        try matcher(try OutputFormat.jsonSchema(text: text))
    }

    @Test("an object schema takes its properties in order, optional ones skippable")
    func objectProperties() throws {
        let m = try schema(
            #"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},"c":{"type":"boolean"}},"required":["a","c"]}"#
        )
        #expect(m.accepts(Array(#"{"a":1,"b":"x","c":true}"#.utf8)))
        #expect(m.accepts(Array(#"{"a":-12,"c":false}"#.utf8)))
        #expect(!m.accepts(Array(#"{"a":1}"#.utf8)))
        #expect(!m.accepts(Array(#"{"c":true,"a":1}"#.utf8)))
        #expect(!m.accepts(Array(#"{"a":01,"c":true}"#.utf8)))
        #expect(!m.accepts(Array(#"{"a":1,"c":true,"d":1}"#.utf8)))
    }

    @Test("all-optional properties need no stray commas")
    func optionalCommas() throws {
        let m = try schema(#"{"properties":{"a":{"type":"null"},"b":{"type":"null"}}}"#)
        for ok in ["{}", #"{"a":null}"#, #"{"b":null}"#, #"{"a":null,"b":null}"#] {
            #expect(m.accepts(Array(ok.utf8)), "\(ok)")
        }
        for bad in ["{,}", #"{,"b":null}"#, #"{"a":null,}"#] { #expect(!m.accepts(Array(bad.utf8)), "\(bad)") }
    }

    @Test("integer ranges are exact at their edges")
    func integerRanges() throws {
        let m = try schema(#"{"type":"integer","minimum":-37,"maximum":1204}"#)
        for n in -60...1300 {
            #expect(m.accepts(Array(String(n).utf8)) == (n >= -37 && n <= 1204), "\(n)")
        }
        let open = try schema(#"{"type":"integer","exclusiveMinimum":99}"#)
        #expect(!open.accepts(Array("99".utf8)))
        #expect(open.accepts(Array("100".utf8)))
        #expect(open.accepts(Array("123456789".utf8)))
    }

    @Test("strings: escapes, lengths in characters, no raw control characters")
    func strings() throws {
        let m = try schema(#"{"type":"string","minLength":2,"maxLength":3}"#)
        #expect(m.accepts(Array(#""ab""#.utf8)))
        #expect(m.accepts(Array(#""\n\u00e9é""#.utf8)))
        #expect(!m.accepts(Array(#""a""#.utf8)))
        #expect(!m.accepts(Array(#""abcd""#.utf8)))
        #expect(!m.accepts(Array("\"a\nb\"".utf8)))
        #expect(!m.accepts(Array(#""\ud800x""#.utf8)))
    }

    @Test("recursive $ref, enum, const, anyOf, arrays with bounds")
    func structures() throws {
        let m = try schema(
            ##"{"$defs":{"node":{"type":"object","properties":{"v":{"enum":["x",1,null]},"kids":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},"required":["v"]}},"$ref":"#/$defs/node"}"##
        )
        #expect(m.accepts(Array(#"{"v":"x","kids":[{"v":1},{"v":null,"kids":[]}]}"#.utf8)))
        #expect(!m.accepts(Array(#"{"v":"y"}"#.utf8)))
        #expect(!m.accepts(Array(#"{"v":1,"kids":[{"v":1},{"v":1},{"v":1}]}"#.utf8)))
        let tuple = try schema(#"{"prefixItems":[{"const":"a"},{"type":"boolean"}],"minItems":1}"#)
        #expect(tuple.accepts(Array(#"["a"]"#.utf8)))
        #expect(tuple.accepts(Array(#"["a",true]"#.utf8)))
        #expect(!tuple.accepts(Array(#"[]"#.utf8)))
        #expect(!tuple.accepts(Array(#"["a",true,1]"#.utf8)))
    }

    @Test("additionalProperties as a schema allows other keys, never a declared one twice")
    func additional() throws {
        let m = try schema(#"{"properties":{"id":{"type":"integer"}},"additionalProperties":{"type":"string"}}"#)
        #expect(m.accepts(Array(#"{"id":1,"name":"x","i":"y"}"#.utf8)))
        #expect(!m.accepts(Array(#"{"id":1,"id":"x"}"#.utf8)))
        #expect(m.accepts(Array(#"{"idx":"x"}"#.utf8)))
    }

    @Test("unsupported keywords are refused by name")
    func unsupported() throws {
        for (text, keyword) in [
            (#"{"type":"array","uniqueItems":true}"#, "uniqueItems"),
            (#"{"not":{"type":"string"}}"#, "not"),
            (#"{"type":"object","patternProperties":{}}"#, "patternProperties"),
            (#"{"type":"string","format":"ipv4"}"#, "format"),
            (#"{"type":"integer","nullable":true}"#, "nullable"),
            (#"{"oneOf":[{"type":"object"},{"type":"object"}]}"#, "oneOf"),
        ] {
            #expect(throws: ConstraintError.self) { try schema(text) }
            do {
                _ = try schema(text)
            } catch let error as ConstraintError {
                #expect(error.unsupported == keyword, "\(error.message)")
            }
        }
    }

    @Test("a schema accepting nothing, and deep or huge schemas, are errors not hangs")
    func budgets() throws {
        #expect(throws: ConstraintError.self) { try schema(#"{"type":"object","required":["a"],"additionalProperties":false}"#) }
        #expect(throws: ConstraintError.self) { try schema(#"{"enum":[]}"#) }
        let deep = String(repeating: #"{"items":"#, count: 10_000) + "{}" + String(repeating: "}", count: 10_000)
        #expect(throws: ConstraintError.self) { try schema(deep) }
        let wide = #"{"type":"string","maxLength":1000000}"#
        #expect(throws: ConstraintError.self) { try schema(wide) }
    }

    @Test("a 1 MB schema compiles or is refused within the budget, and its matcher runs")
    func megabyteSchema() throws {
        var properties: [String] = []
        var size = 0
        var i = 0
        while size < 1_000_000 {
            let member = #""p\#(i)":{"type":"string","description":"\#(String(repeating: "d", count: 30))","enum":["a\#(i)","b"]}"#
            properties.append(member)
            size += member.utf8.count + 1
            i += 1
        }
        let text = #"{"type":"object","properties":{"# + properties.joined(separator: ",") + "}}"
        #expect(text.utf8.count >= 1_000_000)
        let m = try schema(text)
        #expect(m.advance(bytes: Array(#"{"p0":"a0","p1":"b""#.utf8)))
        #expect(!m.advance(bytes: Array(#","p0""#.utf8)))
    }

    @Test("regular expressions: classes, bounds, anchors; backreferences refused")
    func regex() throws {
        let m = try matcher(.regex(#"^(?:[A-Z]{2}-\d{3,4}|x+)$"#))
        #expect(m.accepts(Array("AB-123".utf8)))
        #expect(m.accepts(Array("AB-1234".utf8)))
        #expect(m.accepts(Array("xxx".utf8)))
        #expect(!m.accepts(Array("AB-12".utf8)))
        #expect(!m.accepts(Array("".utf8)))
        let unicode = try matcher(.regex("[^a]é."))
        #expect(unicode.accepts(Array("ÿé€".utf8)))
        #expect(!unicode.accepts(Array("aéb".utf8)))
        for bad in [#"(a)\1"#, "(?=a)b", #"a\bb"#, "a)"] {
            #expect(throws: ConstraintError.self) { try matcher(.regex(bad)) }
        }
    }

    @Test("GBNF: llama.cpp's syntax, multi-line rules; left recursion refused")
    func gbnf() throws {
        let m = try matcher(
            .grammar(
                """
                # a list of numbers
                root ::= "[" ws (num ("," ws num)*)? "]"
                num  ::= "-"? [0-9]+
                  | "inf"
                ws ::= [ \\t\\n]{0,2}
                """))
        #expect(m.accepts(Array("[1, -20,inf]".utf8)))
        #expect(m.accepts(Array("[]".utf8)))
        #expect(!m.accepts(Array("[1,,2]".utf8)))
        #expect(throws: ConstraintError.self) { try matcher(.grammar("root ::= root \"a\" | \"b\"")) }
        #expect(throws: ConstraintError.self) { try matcher(.grammar("root ::= x")) }
        #expect(throws: ConstraintError.self) { try matcher(.grammar("a ::= \"x\"")) }
        // Right recursion and nullable loops are fine.
        let right = try matcher(.grammar("root ::= \"a\" root | \"b\"\nloop ::= (\"x\"?)*"))
        #expect(right.accepts(Array("aaab".utf8)))
    }
}

/// A model cannot loop inside a number or in whitespace: every run is bounded.
@Suite("constraint bounds")
struct ConstraintBoundsTests {
    func schema(_ text: String, maxWhitespace: Int = 0) throws -> GrammarMatcher {
        GrammarMatcher(
            grammar: try OutputFormat.jsonSchema(text: text).compile(maxWhitespace: maxWhitespace),
            vocabulary: ConstraintCompileTests.bytesVocabulary)
    }

    @Test("integers, fractions and exponents have a bounded number of digits")
    func digits() throws {
        let digits = JSONTerminals.maxDigits
        for type in ["integer", "number"] {
            let m = try schema(#"{"type":"object","properties":{"n":{"type":"\#(type)"}},"required":["n"]}"#)
            #expect(m.advance(bytes: Array(#"{"n":-3"#.utf8)))
            #expect(m.advance(bytes: Array(repeating: UInt8(ascii: "0"), count: digits - 1)))
            #expect(!m.copyAccepts(prefix: [UInt8(ascii: "0")]), "\(type): a digit past \(digits)")
            #expect(m.copyAccepts(prefix: Array("}".utf8)))
        }
        let number = try schema(#"{"type":"number"}"#)
        let fraction = "1." + String(repeating: "5", count: digits)
        #expect(number.accepts(Array(fraction.utf8)))
        #expect(!number.accepts(Array((fraction + "5").utf8)))
        #expect(number.accepts(Array("1e-99".utf8)))
        #expect(!number.accepts(Array("1e-999".utf8)))
        // An integer range without an upper bound is bounded by the digits too.
        let atLeast = try schema(#"{"type":"integer","minimum":5}"#)
        #expect(atLeast.accepts(Array(String(repeating: "9", count: digits).utf8)))
        #expect(!atLeast.accepts(Array(String(repeating: "9", count: digits + 1).utf8)))
    }

    @Test("whitespace: none by default, at most the bound at each separator")
    func whitespace() throws {
        let text = #"{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}}}"#
        let compact = try schema(text)
        #expect(compact.accepts(Array(#"{"a":[1,2]}"#.utf8)))
        #expect(!compact.accepts(Array(#"{"a": [1,2]}"#.utf8)))
        let spaced = try schema(text, maxWhitespace: 2)
        #expect(spaced.accepts(Array("{ \"a\" :\n [ 1 ,\t2 ] }".utf8)))
        #expect(!spaced.accepts(Array("{\"a\":   [1]}".utf8)))
        #expect(!spaced.accepts(Array("{\"a\":[1]}   ".utf8)))
    }
}
