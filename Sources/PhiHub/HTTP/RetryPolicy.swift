import Foundation
import PhiFormats

/// When to try a request again, and how long to wait first: exponential backoff from
/// `baseDelay` (doubling, capped at `8 × baseDelay`), or the server's `Retry-After` when it
/// sends one (429, 503). huggingface_hub treats a 503 on a file download as fatal; phikit
/// retries 408, 429, 5xx and broken connections, and a download resumes where it stopped.
public struct RetryPolicy: Sendable, Equatable {
    /// Tries per request, the first one included.
    public var maxAttempts: Int
    /// Seconds before the first retry; doubles each time.
    public var baseDelay: Double
    /// The longest `Retry-After` phikit waits for; a server asking for more gets an error
    /// that says how long it asked for.
    public var maxRetryAfter: Double

    public init(maxAttempts: Int = 6, baseDelay: Double = 1, maxRetryAfter: Double = 60) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxRetryAfter = maxRetryAfter
    }

    /// The statuses worth retrying: timeouts, rate limits and server-side failures.
    static let retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// Defaults, with `PHIKIT_RETRY_BASE_SECONDS` and `PHIKIT_RETRY_AFTER_MAX_SECONDS`
    /// overriding the waits (the tests use them to stay fast) and `PHIKIT_RETRY_ATTEMPTS`
    /// the number of tries.
    public static func from(environment: [String: String]) -> RetryPolicy {
        var policy = RetryPolicy()
        if let base = environment["PHIKIT_RETRY_BASE_SECONDS"].flatMap(Double.init), base >= 0 {
            policy.baseDelay = base
        }
        if let cap = environment["PHIKIT_RETRY_AFTER_MAX_SECONDS"].flatMap(Double.init), cap >= 0 {
            policy.maxRetryAfter = cap
        }
        if let tries = environment["PHIKIT_RETRY_ATTEMPTS"].flatMap(Int.init), tries >= 1 {
            policy.maxAttempts = tries
        }
        return policy
    }

    /// `Retry-After` as seconds: either a number of seconds or an HTTP date.
    static func retryAfterSeconds(_ value: String?, now: Date = Date()) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            return nil
        }
        if let seconds = Double(value), seconds >= 0, seconds.isFinite { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}

/// The retry state of one request (or one file download, which resets it whenever bytes
/// arrive: a connection that keeps dropping but makes progress is not a failure).
struct Backoff: Sendable {
    let policy: RetryPolicy
    private(set) var failures = 0

    init(_ policy: RetryPolicy) { self.policy = policy }

    enum Decision: Equatable {
        case retry(after: Double)
        /// Tries used up.
        case giveUp
        /// The server asked for a longer wait than `maxRetryAfter`.
        case waitTooLong(seconds: Double)
    }

    /// Records a failure and says what to do next.
    mutating func next(retryAfter: Double?) -> Decision {
        failures += 1
        guard failures < policy.maxAttempts else { return .giveUp }
        if let retryAfter {
            return retryAfter > policy.maxRetryAfter
                ? .waitTooLong(seconds: retryAfter) : .retry(after: retryAfter)
        }
        let exponent = Double(min(failures - 1, 3))  // 1, 2, 4, 8 × base
        return .retry(after: policy.baseDelay * pow(2, exponent))
    }

    mutating func madeProgress() { failures = 0 }

    /// Sleeps `seconds` in short slices so a cancelled job (Ctrl-C) is not kept waiting.
    static func sleep(
        _ seconds: Double, cancellation: CancellationToken?
    ) throws(Interrupted) {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            try cancellation.check()
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return }
            Thread.sleep(forTimeInterval: min(left, 0.05))
        }
    }
}
