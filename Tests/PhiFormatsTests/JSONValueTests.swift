import Testing

@testable import PhiFormats

/// Parses `text`, failing the test on error.
private func parse(_ text: String) throws -> JSONValue { try JSONValue(parsing: Array(text.utf8)) }

/// The error `text` throws, if any.
private func parseError(_ bytes: [UInt8]) -> JSONError? {
    do {
        _ = try JSONValue(parsing: bytes)
        return nil
    } catch {
        return error
    }
}

@Suite struct JSONValueTests {
    // MARK: Parsing

    @Test func parsesAllKindsKeepingOrderAndLiterals() throws {
        let v = try parse(
            #" { "b" : [1, 2.50, -0, 1E5, true, false, null], "a" : "x\u00e9\n", "c": {} } "#)
        #expect(v.objectValue?.map(\.key) == ["b", "a", "c"])
        #expect(
            v["b"]
                == .array([
                    .number("1"), .number("2.50"), .number("-0"), .number("1E5"),
                    .bool(true), .bool(false), .null,
                ]))
        #expect(v["a"]?.stringValue == "xé\n")
        #expect(v["c"] == .object([]))
        #expect(v["missing"] == nil)
    }

    @Test func escapesAndSurrogatePairs() throws {
        let v = try parse(#""\"\\\/\b\f\n\r\t\u0041\ud83d\ude00\u00e9""#)
        #expect(v.stringValue == "\"\\/\u{08}\u{0C}\n\r\tA😀é")
    }

    @Test(arguments: [
        ("", JSONError.Kind.unexpectedEnd),
        ("{", .unexpectedEnd),
        ("[1,]", .unexpectedByte(UInt8(ascii: "]"))),
        ("{\"a\":1,}", .unexpectedByte(UInt8(ascii: "}"))),
        ("{\"a\" 1}", .unexpectedByte(UInt8(ascii: "1"))),
        ("{a:1}", .unexpectedByte(UInt8(ascii: "a"))),
        ("01", .trailingData),
        ("1 2", .trailingData),
        ("{} x", .trailingData),
        ("-", .invalidNumber),
        ("1.", .invalidNumber),
        ("1e", .invalidNumber),
        (".5", .unexpectedByte(UInt8(ascii: "."))),
        ("+1", .unexpectedByte(UInt8(ascii: "+"))),
        ("tru", .unexpectedEnd),
        ("nul!", .unexpectedByte(UInt8(ascii: "!"))),
        ("\"a\tb\"", .controlCharacterInString),
        ("\"\\x\"", .invalidEscape),
        ("\"\\u12G4\"", .invalidEscape),
        ("\"\\ud800\"", .loneSurrogate),
        ("\"\\udc00\"", .loneSurrogate),
        ("\"\\ud800\\u0041\"", .loneSurrogate),
        ("{\"a\":1,\"a\":2}", .duplicateKey("a")),
        ("NaN", .unexpectedByte(UInt8(ascii: "N"))),
    ])
    func rejects(_ text: String, _ kind: JSONError.Kind) {
        #expect(parseError(Array(text.utf8))?.kind == kind, "\(text)")
    }

    @Test func invalidUTF8IsRejected() {
        let cases: [[UInt8]] = [
            [0x22, 0xFF, 0x22],  // never valid
            [0x22, 0xC0, 0xAF, 0x22],  // overlong "/"
            [0x22, 0xED, 0xA0, 0x80, 0x22],  // encoded surrogate
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
            [0x22, 0xE2, 0x82, 0x22],  // truncated sequence
            [0x22, 0xE2, 0x82],
        ]
        for bytes in cases { #expect(parseError(bytes)?.kind == .invalidUTF8, "\(bytes)") }
        #expect(parseError([0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22]) == nil)
    }

    @Test func errorsCarryOffsetAndDepth() throws {
        let e = try #require(parseError(Array(#"{"x": {"a": 1, "a": 2}}"#.utf8)))
        #expect(e.kind == .duplicateKey("a"))
        #expect(e.offset == 15)
        #expect(e.depth == 2)
        #expect(e.message == #"invalid JSON at byte 15: duplicate key "a""#)
        #expect(e.exitCode == .dataError)
        #expect(parseError(Array(#"{"t": 1, "t": 2}"#.utf8))?.depth == 1)
    }

    @Test func nestingLimit() {
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(parseError(Array(ok.utf8)) == nil)
        let deep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(parseError(Array(deep.utf8))?.kind == .tooDeep)
        // Far deeper than the stack could take by recursion: must still just throw.
        #expect(parseError(Array(repeating: UInt8(ascii: "["), count: 1_000_000))?.kind == .tooDeep)
    }

    @Test func parsesNonContiguousCollections() throws {
        let v = try JSONValue(parsing: "[1,2]".utf8.lazy.map { $0 })
        #expect(v == .array([.int(1), .int(2)]))
    }

    // MARK: Accessors and editing

    @Test func accessors() throws {
        #expect(JSONValue.number("32064").intValue == 32064)
        #expect(JSONValue.number("-3").intValue == -3)
        #expect(JSONValue.number("2.0").intValue == nil)
        #expect(JSONValue.number("1e3").intValue == nil)
        #expect(JSONValue.number("99999999999999999999").intValue == nil)
        #expect(JSONValue.number("1e-05").doubleValue == 1e-5)
        #expect(JSONValue.number("7").doubleValue == 7)
        #expect(JSONValue.string("7").intValue == nil)
        #expect(JSONValue.array([]).arrayValue?.isEmpty == true)
        #expect(JSONValue.null.objectValue == nil)
        #expect(JSONValue.int(-5) == .number("-5"))
    }

    @Test func setReplacesAppendsRemoves() throws {
        var v = try parse(#"{"a":1,"b":2,"c":3}"#)
        v.set("b", .string("x"))
        v.set("d", .bool(true))
        v.set("a", nil)
        v.set("zz", nil)
        #expect(v.serialized() == #"{"b":"x","c":3,"d":true}"#)
        var array = JSONValue.array([])
        array.set("a", .null)
        #expect(array == .array([]))
    }

    @Test func sortedKeysTopLevelOnly() throws {
        let v = try parse(#"{"b":{"z":1,"y":2},"B":0,"a":[],"é":1,"_":2}"#)
        #expect(v.sortedKeys().serialized() == #"{"B":0,"_":2,"a":[],"b":{"z":1,"y":2},"é":1}"#)
    }

    @Test func equalityIsOrderedAndLiteral() {
        let ab = JSONValue.object([("a", .int(1)), ("b", .int(2))])
        let ba = JSONValue.object([("b", .int(2)), ("a", .int(1))])
        #expect(ab != ba)
        #expect(ab == .object([("a", .number("1")), ("b", .number("2"))]))
        #expect(JSONValue.number("1.0") != .number("1"))
    }

    // MARK: Writing

    @Test func compactSerialization() throws {
        let text = #"{"a":1,"b":[1,2],"s":"é\"\\\n\u0001","n":null,"e":{},"l":[],"f":1e-05}"#
        let v = try parse(text)
        #expect(
            v.serialized()
                == #"{"a":1,"b":[1,2],"s":"é\"\\\n\u0001","n":null,"e":{},"l":[],"f":1e-05}"#)
        #expect(try parse(v.serialized()) == v)
    }

    /// Expected strings produced by `json.dump(json.loads(input), f, indent=4)` in Python 3.
    @Test(arguments: pythonDumpCases)
    func pythonJSONDumpMatchesPython(_ input: String, _ expected: String) throws {
        #expect(try parse(input).pythonJSONDump() == expected)
    }

    @Test func pythonDumpOfBuiltValues() {
        let v = JSONValue.object([
            (
                "quantization",
                .object([("group_size", .int(64)), ("bits", .int(4)), ("mode", .string("affine"))])
            ),
            ("eps", .double(1e-5)), ("theta", .double(10000)), ("lr", .double(0.0001)),
            ("big", .double(1e16)),
        ])
        #expect(
            v.pythonJSONDump() == """
                {
                    "quantization": {
                        "group_size": 64,
                        "bits": 4,
                        "mode": "affine"
                    },
                    "eps": 1e-05,
                    "theta": 10000.0,
                    "lr": 0.0001,
                    "big": 1e+16
                }
                """)
        #expect(JSONValue.array([.int(1)]).pythonJSONDump(indent: 2) == "[\n  1\n]")
    }

    /// Bit patterns and Python's `repr(float)` of them: edges and random doubles.
    @Test(arguments: reprPairs)
    func doubleFormatsLikePythonRepr(_ bits: UInt64, _ expected: String) {
        #expect(JSONValue.double(Double(bitPattern: bits)) == .number(expected))
        let negated = expected.hasPrefix("-") ? String(expected.dropFirst()) : "-" + expected
        #expect(JSONValue.double(-Double(bitPattern: bits)) == .number(negated))
    }

    @Test func specialDoubles() {
        #expect(JSONValue.double(0) == .number("0.0"))
        #expect(JSONValue.double(-0.0) == .number("-0.0"))
        #expect(JSONValue.double(.nan) == .number("NaN"))
        #expect(JSONValue.double(.infinity) == .number("Infinity"))
        #expect(JSONValue.double(-.infinity) == .number("-Infinity"))
        #expect(JSONValue.double(.infinity).doubleValue == .infinity)
    }
}

private let pythonDumpCases: [(String, String)] = [
    (
        #"{"architectures":["Phi3ForCausalLM"],"rms_norm_eps":1e-05,"rope_theta":10000.0,"vocab_size":32064,"lr":0.0001,"big":1e16,"neg":-0.0,"negint":-0,"e":1E5,"tiny":5e-324,"exp":1.5e-7,"frac":0.5,"huge":123456789012345678901234567890,"inf":1.0e400,"rope_scaling":{"long_factor":[1.0,1.25],"type":"longrope"},"empty_obj":{},"empty_arr":[],"nested":[[],{},[[]],{"a":{}}],"null":null,"t":true,"f":false}"#,
        """
        {
            "architectures": [
                "Phi3ForCausalLM"
            ],
            "rms_norm_eps": 1e-05,
            "rope_theta": 10000.0,
            "vocab_size": 32064,
            "lr": 0.0001,
            "big": 1e+16,
            "neg": -0.0,
            "negint": 0,
            "e": 100000.0,
            "tiny": 5e-324,
            "exp": 1.5e-07,
            "frac": 0.5,
            "huge": 123456789012345678901234567890,
            "inf": Infinity,
            "rope_scaling": {
                "long_factor": [
                    1.0,
                    1.25
                ],
                "type": "longrope"
            },
            "empty_obj": {},
            "empty_arr": [],
            "nested": [
                [],
                {},
                [
                    []
                ],
                {
                    "a": {}
                }
            ],
            "null": null,
            "t": true,
            "f": false
        }
        """
    ),
    (
        #"{"name":"caf\u00e9 \u2615 \ud83d\ude00 \u00ff","ctrl":"a\tb\nc\r\b\f\u0001\u001f\u007f","quote":"\"\\\/","raw":"é😀","key é":1}"#,
        #"""
        {
            "name": "caf\u00e9 \u2615 \ud83d\ude00 \u00ff",
            "ctrl": "a\tb\nc\r\b\f\u0001\u001f\u007f",
            "quote": "\"\\/",
            "raw": "\u00e9\ud83d\ude00",
            "key \u00e9": 1
        }
        """#
    ),
    (
        #"[1,2.5,"x",[1,[2,[3]]],{}]"#,
        """
        [
            1,
            2.5,
            "x",
            [
                1,
                [
                    2,
                    [
                        3
                    ]
                ]
            ],
            {}
        ]
        """
    ),
    ("1e-5", "1e-05"),
    (#""just a string""#, #""just a string""#),
    ("[]", "[]"),
]

private let reprPairs: [(UInt64, String)] = [
    (0x3ee4_f8b5_88e3_68f1, "1e-05"),
    (0x40c3_8800_0000_0000, "10000.0"),
    (0x3f1a_36e2_eb1c_432d, "0.0001"),
    (0x4341_c379_37e0_8000, "1e+16"),
    (0x430c_6bf5_2634_0000, "1000000000000000.0"),
    (0x4341_c379_37e0_7fff, "9999999999999998.0"),
    (0x3fb9_9999_9999_999a, "0.1"),
    (0x3fd5_5555_5555_5555, "0.3333333333333333"),
    (0x0000_0000_0000_0001, "5e-324"),
    (0x7fef_ffff_ffff_ffff, "1.7976931348623157e+308"),
    (0x419d_6f34_5400_0000, "123456789.0"),
    (0x4480_f0cf_064d_d592, "1e+22"),
    (0x444b_1ae4_d6e2_ef50, "1e+21"),
    (0x3f50_624d_d2f1_a9fc, "0.001"),
    (0x3eef_7510_4d55_1d69, "1.5e-05"),
    (0x4004_0000_0000_0000, "2.5"),
    (0x4059_0000_0000_0000, "100.0"),
    (0x54b2_49ad_2594_c37d, "1e+100"),
    (0xab2b_ff2e_e48e_0530, "-1e-100"),
    (0x0000_0000_0000_0001, "5e-324"),
    (0x3e4a_831b_d731_a289, "1.2345678901234567e-08"),
    (0x40ef_fc00_0000_0000, "65504.0"),
    (0xf2a7_4de4_52e6_b438, "-1.989032661366619e+244"),
    (0x6513_270e_269e_0d37, "7.761117632285041e+178"),
    (0x0c5c_7fd0_a6a3_a450, "3.980498358697587e-249"),
    (0xd23f_0824_128b_2f33, "-1.5432835417340557e+88"),
    (0x1818_e811_892f_902b, "1.3647584518757569e-192"),
    (0x9531_985d_5d9d_c9f8, "-1.3701135617873088e-206"),
    (0xe8e2_5d94_0ed9_0475, "-1.7160537630466207e+197"),
    (0x36f6_75cc_81e7_4ef5, "6.294675241195386e-44"),
    (0x1600_a35a_0999_50d8, "1.0613447212142254e-202"),
    (0x6b0d_549b_6f03_675a, "4.708325160387546e+207"),
    (0x3d9c_1724_11e2_0b8f, "6.387016158513563e-12"),
    (0x8d11_6ece_1738_f7d9, "-9.973130378568733e-246"),
    (0x0f21_ddb6_6cad_4a26, "8.779753225680271e-236"),
    (0x90c1_92cf_d3ac_94af, "-5.795503248498993e-228"),
    (0xf28c_105d_1fb1_7c23, "-5.988180159386011e+243"),
    (0xa170_b338_3926_3059, "-1.306052388527796e-147"),
    (0x953f_48f1_a09f_76b5, "-2.436117699484841e-206"),
    (0x0fd6_30f1_f29d_0da9, "2.233386999150174e-232"),
    (0x95e6_0af5_93bd_04cf, "-3.51527970626667e-203"),
    (0x0cb1_e29c_658c_da14, "1.5987381841032883e-247"),
    (0x3898_d190_f9eb_dacc, "4.6678633181812096e-36"),
    (0x8e81_973e_0bec_d7b0, "-8.441872792105456e-239"),
    (0x2217_bead_dbc4_96cb, "1.9015657400796622e-144"),
    (0x6b4c_b242_4a23_d596, "7.370437700706684e+208"),
    (0x8a6a_63ec_24ed_e6a4, "-1.7163996725272777e-258"),
    (0x9227_6658_1e27_a1c0, "-3.2367190832119987e-221"),
    (0x8f6d_0558_4ef8_aa38, "-2.2818334634712625e-234"),
    (0xae97_ba94_d0ed_a82f, "-3.0536383926309363e-84"),
    (0x1a61_dbe2_2e44_158b, "1.3449551894627777e-181"),
    (0x923a_7369_94e3_bf91, "-7.317495976062606e-221"),
    (0x3018_50c5_a38f_d547, "5.249822308814304e-77"),
    (0x18f1_35d2_5f55_7203, "1.5450754142984396e-188"),
    (0xb64c_e422_8c38_fb29, "-3.953625698224792e-47"),
    (0x907a_70c3_1012_f037, "-2.72491267476498e-229"),
    (0x9e77_69b1_0f42_05b4, "-6.505141861548772e-162"),
    (0x7f15_0524_34b9_b5df, "1.441484839555994e+304"),
    (0x881e_d162_ae2e_b154, "-1.4583679262758548e-269"),
    (0xc6f8_7718_6d76_b07e, "-7.939416668807721e+33"),
    (0x7731_af10_506b_f2ef, "1.4255183989699612e+266"),
    (0xec66_a787_95e7_61d1, "-1.525315701232403e+214"),
    (0xc057_6866_5ae6_aeb0, "-93.63124725844932"),
    (0xc079_0774_c2fe_4b30, "-400.46600627263524"),
    (0x4082_6612_5b37_8892, "588.7589630449822"),
    (0x4078_dfd2_66af_5188, "397.9888674591425"),
    (0xc07f_fce9_6258_947b, "-511.80697855569423"),
    (0x4062_9b1e_11a1_fe30, "148.84742051734202"),
    (0x4049_324e_12e3_b920, "50.393007622902815"),
    (0x4087_7233_2e8e_f38c, "750.2749911468577"),
    (0x407c_ae3f_cfa3_5634, "458.89057887843524"),
    (0xc07a_81fd_d47c_29fa, "-424.1244702196269"),
    (0x408e_02cc_2ce2_66d8, "960.3496949851642"),
    (0xc087_def2_9280_2266, "-763.8684434900758"),
    (0xc064_7823_b018_4da0, "-163.75435642954562"),
    (0x4080_1241_3f5c_1c92, "514.2818591304988"),
    (0xc085_c03f_5895_75a8, "-696.0309306789904"),
    (0xc036_12e4_7e93_4e40, "-22.073799048388764"),
    (0xc08c_ccaf_133b_f63c, "-921.5854859051246"),
    (0x4075_06e8_4bf6_7b60, "336.4317130687905"),
    (0x4080_8922_449c_26c8, "529.1417324256263"),
    (0x4062_41a9_0168_c0d8, "146.05188055476788"),
    (0x4365_c490_8a0a_383a, "4.901679664947246e+16"),
    (0x4366_6952_963f_dc12, "5.046602333309352e+16"),
    (0x436f_c985_1305_13fa, "7.157838131970862e+16"),
    (0x4341_9a72_ba64_efb5, "9909784296415082.0"),
    (0x4347_f5e8_6b84_107f, "1.3488606098759934e+16"),
    (0x4361_46af_7e3a_d3db, "3.890235324069449e+16"),
    (0x4340_a3d6_d502_f08d, "9367485438877978.0"),
    (0x4363_d09b_7672_9f67, "4.461912546587321e+16"),
    (0x4372_7e89_1a5a_a3c8, "8.329083037694272e+16"),
    (0x4375_ccb1_efe3_b891, "9.817662587008027e+16"),
]
