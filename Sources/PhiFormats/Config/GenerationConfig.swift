import Foundation

/// `generation_config.json`: its `eos_token_id` overrides config.json's (as in mlx-lm and
/// mlx-swift-lm); the sampling fields are the model author's defaults.
public struct GenerationConfig: Sendable, Equatable {
    public var eosTokenIds: [Int]
    public var bosTokenId: Int?
    public var temperature: Double?
    public var topP: Double?
    public var topK: Int?
    public var doSample: Bool?

    public init(
        eosTokenIds: [Int] = [], bosTokenId: Int? = nil, temperature: Double? = nil,
        topP: Double? = nil,
        topK: Int? = nil, doSample: Bool? = nil
    ) {
        self.eosTokenIds = eosTokenIds
        self.bosTokenId = bosTokenId
        self.temperature = temperature
        self.topP = topP
        self.topK = topK
        self.doSample = doSample
    }

    /// Reads `<directory>/generation_config.json`; nil when the file is absent (it is optional).
    public static func load(directory: String) throws(ConfigError) -> GenerationConfig? {
        let path = (directory as NSString).appendingPathComponent("generation_config.json")
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try GenerationConfig(data: readMetadataFile(path), source: path)
    }

    public init(data: some Collection<UInt8>, source: String) throws(ConfigError) {
        do {
            self = try JSONDecoder().decode(
                GenerationConfig.self, from: try strictJSON(data, path: source))
        } catch {
            throw ConfigError.wrapping(error, path: source)
        }
    }
}

extension GenerationConfig: Decodable {
    enum CodingKeys: String, CodingKey {
        case eosTokenId = "eos_token_id"
        case bosTokenId = "bos_token_id"
        case temperature
        case topP = "top_p"
        case topK = "top_k"
        case doSample = "do_sample"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        eosTokenIds = try ModelConfig.decodeIntOrList(c, .eosTokenId)
        bosTokenId = try c.decodeIfPresent(Int.self, forKey: .bosTokenId)
        temperature = try c.decodeIfPresent(Double.self, forKey: .temperature)
        topP = try c.decodeIfPresent(Double.self, forKey: .topP)
        topK = try c.decodeIfPresent(Int.self, forKey: .topK)
        doSample = try c.decodeIfPresent(Bool.self, forKey: .doSample)
    }
}
