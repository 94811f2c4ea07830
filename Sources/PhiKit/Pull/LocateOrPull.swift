import Foundation
import PhiFormats
import PhiHub

extension ModelLocator {
    /// Finds MODEL as `locate` does, but a Hub model missing from the cache is pulled first
    /// (the pull's plan, progress, hashing and resume go to `progress`), as `run` and
    /// `convert ORG/NAME` need it and `mlx_lm.convert --hf-path` does. With `HF_HUB_OFFLINE`
    /// set, a missing model is `OfflineModelMissing` instead. `cancellation` stops the pull.
    public static func locate(
        _ model: String, environment: [String: String],
        pullingWith progress: (PullProgress) -> Void, cancellation: CancellationToken? = nil
    ) throws -> LocalModel {
        do {
            return try locate(model, environment: environment)
        } catch let error as ModelLocatorError {
            guard case .notDownloaded = error else { throw error }
            let offline =
                HubConfiguration.from(environment: environment, token: nil, userAgent: "").offline
            guard !offline else { throw OfflineModelMissing(missing: error) }
            var options = PullOptions(model: model, environment: environment)
            options.cancellation = cancellation
            _ = try PhiKit.pull(options, progress: progress)
            return try locate(model, environment: environment)
        }
    }
}
