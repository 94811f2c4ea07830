import Foundation
import Testing

@testable import PhiFormats

private var phi35Dir: String { get throws { try SharedFixtures.phi35 } }

@Suite struct ShardIndexTests {
    @Test func readsRealPhi35Index() throws {
        let index = try ShardIndex(directory: phi35Dir)
        #expect(index.weightMap.count == 195)
        #expect(index.totalSize == 7_642_159_104)
        #expect(index.totalParameters == nil)
        #expect(
            index.shardFiles == [
                "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
            ])
        #expect(index.weightMap["lm_head.weight"] == "model-00002-of-00002.safetensors")
    }

    @Test func writesExactlyWhatMlxLmWrites() throws {
        let index = ShardIndex(
            weightMap: [
                "b.weight": "model-00002-of-00002.safetensors",
                "a.weight": "model-00001-of-00002.safetensors",
            ],
            totalSize: 1234, totalParameters: 567)
        // python: json.dump({"metadata": {...}, "weight_map": {sorted}}, f, indent=4)
        let expected =
            "{\n    \"metadata\": {\n        \"total_size\": 1234,\n        \"total_parameters\": 567\n    },\n"
            + "    \"weight_map\": {\n        \"a.weight\": \"model-00001-of-00002.safetensors\",\n"
            + "        \"b.weight\": \"model-00002-of-00002.safetensors\"\n    }\n}"
        #expect(String(decoding: index.jsonData(), as: UTF8.self) == expected)
        #expect(try ShardIndex(data: index.jsonData(), source: "i.json") == index)
    }

    @Test func roundTripsTheRealIndex() throws {
        let index = try ShardIndex(directory: phi35Dir)
        let again = try ShardIndex(data: index.jsonData(), source: "i.json")
        #expect(again == index)
        // The HF file is indent=2; ours is mlx_lm's indent=4 with sorted keys.
        #expect(
            String(decoding: index.jsonData(), as: UTF8.self).hasPrefix(
                "{\n    \"metadata\": {\n        \"total_size\": 7642159104\n"))
    }

    @Test(arguments: [
        (#"{"metadata": {}}"#, ConfigError.missingField(path: "i.json", field: "weight_map")),
        (
            #"{"weight_map": []}"#,
            .invalidValue(path: "i.json", field: "weight_map", detail: "must be an object")
        ),
        (
            #"{"weight_map": {"a": 3}}"#,
            .invalidValue(path: "i.json", field: "weight_map.a", detail: "must be a string")
        ),
        (
            #"{"weight_map": {"a": "../x.safetensors"}}"#,
            .invalidValue(
                path: "i.json", field: "weight_map.a",
                detail: "'../x.safetensors' is not a file name inside the model directory")
        ),
        (
            #"{"metadata": {"total_size": -1}, "weight_map": {}}"#,
            .invalidValue(
                path: "i.json", field: "metadata.total_size",
                detail: "must be a non-negative integer")
        ),
    ])
    func rejectsBadIndexes(_ text: String, _ expected: ConfigError) {
        #expect(throws: expected) { try ShardIndex(data: Array(text.utf8), source: "i.json") }
    }

    @Test func acceptsFloatTotalSizeAndMissingMetadata() throws {
        let a = try ShardIndex(
            data: Array(#"{"metadata": {"total_size": 10.0}, "weight_map": {}}"#.utf8), source: "i")
        #expect(a.totalSize == 10)
        let b = try ShardIndex(
            data: Array(#"{"weight_map": {"x": "model.safetensors"}}"#.utf8), source: "i")
        #expect(b.totalSize == nil && b.weightMap == ["x": "model.safetensors"])
    }

    @Test func notJSONIsInvalidJSON() {
        #expect(throws: ConfigError.self) { try ShardIndex(data: Array("{".utf8), source: "i") }
        #expect(throws: ConfigError.missingFile(path: "/nonexistent/model.safetensors.index.json"))
        {
            try ShardIndex(directory: "/nonexistent")
        }
    }
}
