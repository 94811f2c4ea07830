// swift-tools-version:6.0
// phikit: layered targets, dependencies point down only (see DESIGN.md):
//   phikit → PhiKit → {PhiHub, PhiText, PhiEngine} → PhiFormats → CKernels
// PhiHub and PhiEngine never import each other. Each C library is imported by exactly one
// Swift file that wraps it. No Swift package dependencies.
import PackageDescription

// Hot C loops: fast but IEEE-correct (no -ffast-math: it breaks -inf masks and NaN checks).
// `make build NATIVE=1` adds -march=native through PHIKIT_NATIVE (see Makefile).
let kernelFlags: [CSetting] = [.unsafeFlags(["-O3", "-fno-math-errno", "-ffp-contract=fast"])]

let package = Package(
    name: "phikit",
    products: [
        .executable(name: "phikit", targets: ["phikit"]),
        .library(name: "PhiKit", targets: ["PhiKit"]),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "CKernels", cSettings: kernelFlags),
        .target(name: "PhiFormats", dependencies: ["CKernels"]),
        .target(name: "PhiHub", dependencies: ["PhiFormats", "CCurl"]),
        // Tokenizer, chat templates, prompts: no model code and no kernels, so an app or a
        // server that only tokenizes links PhiFormats and this.
        .target(name: "PhiText", dependencies: ["PhiFormats"]),
        .target(name: "PhiEngine", dependencies: ["PhiFormats", "CKernels"]),
        .target(name: "PhiKit", dependencies: ["PhiFormats", "PhiHub", "PhiText", "PhiEngine"]),
        .executableTarget(name: "phikit", dependencies: ["PhiKit"]),
        // Timing tool for the inference core (decode/prefill tokens/s on a model directory).
        .executableTarget(
            name: "engine-bench", dependencies: ["PhiEngine"], path: "scripts/engine/EngineBench"),
        .testTarget(
            name: "PhiFormatsTests", dependencies: ["PhiFormats", "CKernels"],
            resources: [.copy("Fixtures")]),
        // The Hub look-alike (PhiHubTests/Server/hub_server.py) and its launcher, shared by
        // the Hub client's tests and the command-line tests.
        .target(name: "HubTestSupport", path: "Tests/HubTestSupport"),
        .testTarget(
            name: "PhiHubTests", dependencies: ["PhiHub", "HubTestSupport"], exclude: ["Server"]),
        .testTarget(
            name: "PhiEngineTests", dependencies: ["PhiEngine", "PhiFormats", "CKernels"],
            resources: [.copy("Fixtures")]),
        .testTarget(
            name: "PhiTextTests", dependencies: ["PhiText", "PhiFormats"],
            resources: [.copy("Fixtures")]),
        .testTarget(name: "PhiKitTests", dependencies: ["PhiKit"], resources: [.copy("Fixtures")]),
        .testTarget(name: "CLITests", dependencies: ["PhiFormats", "HubTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
