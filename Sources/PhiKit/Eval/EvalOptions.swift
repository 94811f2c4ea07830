import Foundation
import PhiFormats
import PhiEngine

/// What `phikit eval` was asked to measure.
public struct EvalOptions: Sendable, CancellableOptions {
    public enum Reference: Sendable, Equatable {
        /// A model (usually the float source the candidates were made from).
        case model(String)
        /// Each model against float64 of its own stored weights (`ExactPhi3`).
        case exact
    }

    /// The candidates, as MODEL arguments (directory, store name, alias, Hub id).
    public var models: [String]
    public var reference: Reference?
    /// The text to score (UTF-8).
    public var text: String
    /// Tokens per window: the text is cut into windows of this many tokens, each scored from
    /// an empty cache (llama-perplexity's chunks); also the context the memory column is for.
    public var context = 512
    /// The KV cache's width while scoring (float32: only the weights differ between models).
    public var cacheWidth = KVCacheWidth.float32
    public var environment: [String: String]
    /// Looked at between blocks (Ctrl-C).
    public var cancellation: CancellationToken? = nil

    public init(
        models: [String], reference: Reference?, text: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.models = models
        self.reference = reference
        self.text = text
        self.environment = environment
    }
}

/// Scored so far, for a progress bar: positions of all windows, every model at once.
public struct EvalProgress: Sendable {
    public var positionsDone: Int
    public var positionCount: Int
    public var elapsed: Double
}

/// One model's row of the table.
public struct EvalResult: Sendable, Encodable {
    public var model: String
    public var directory: String
    public var isReference: Bool
    public var perplexity: Double
    /// Against the reference (nil for the reference itself, or without one).
    public var meanKL: Double?
    public var p99KL: Double?
    public var topOneAgreement: Double?
    public var meanAbsoluteLogitDifference: Double?
    /// The weight files' bytes.
    public var sizeOnDisk: Int
    /// Weights plus the KV cache of `context` positions at the run default width.
    public var memoryAtContext: Int

    enum CodingKeys: String, CodingKey {
        case model, directory, perplexity
        case isReference = "is_reference"
        case meanKL = "kl_mean"
        case p99KL = "kl_p99"
        case topOneAgreement = "top1_agreement"
        case meanAbsoluteLogitDifference = "mean_abs_logit_diff"
        case sizeOnDisk = "size_on_disk"
        case memoryAtContext = "memory_at_context"
    }
}

public struct EvalReport: Sendable, Encodable {
    public var tokens: Int
    /// Positions scored (every token of a window but its first).
    public var positions: Int
    public var context: Int
    public var windows: Int
    public var seconds: Double
    /// Scored positions per second, all models together, while scoring (without loading the
    /// models and tokenizing the text: comparable with run's prompt tokens per second).
    public var positionsPerSecond: Double
    public var results: [EvalResult]

    enum CodingKeys: String, CodingKey {
        case tokens, positions, context, windows, seconds, results
        case positionsPerSecond = "positions_per_second"
    }
}

public enum EvalError: UserFacingError, Equatable {
    case noModels
    case textTooShort(tokens: Int)
    case differentTokenization(model: String, reference: String)
    case differentVocabulary(model: String, size: Int, reference: String, referenceSize: Int)
    case badContext(Int, maximum: Int)
    case exactUnsupported(modelType: String)

    public var message: String {
        switch self {
        case .noModels: "name at least one model to evaluate"
        case .textTooShort(let n): "the text has \(n) tokens; at least 2 are needed to score one"
        case .differentTokenization(let model, let reference):
            "\(model) tokenizes the text differently from \(reference)"
        case .differentVocabulary(let model, let size, let reference, let refSize):
            "\(model) has \(size) logits per position, \(reference) \(refSize)"
        case .badContext(let n, let maximum): "--ctx \(n) is not possible (2 to \(maximum))"
        case .exactUnsupported(let type):
            "--reference exact runs phi3 models in float64; this one is \(type)"
        }
    }

    public var hint: String? {
        switch self {
        case .differentTokenization, .differentVocabulary:
            "models compared with each other must share one tokenizer (quantizations of one model)"
        default: nil
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .noModels, .badContext, .textTooShort: .usage
        case .differentTokenization, .differentVocabulary, .exactUnsupported: .dataError
        }
    }
}
