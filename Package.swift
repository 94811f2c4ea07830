// swift-tools-version:6.0
// phikit: layered targets, dependencies point down only (see DESIGN.md):
//   phikit → PhiKit → {PhiHub, PhiText, PhiEngine} → PhiFormats → CKernels
// PhiHub and PhiEngine never import each other. libcurl (CCurl) is imported by one Swift file
// that wraps it (PhiHub/HTTP/CurlEasy.swift); CKernels, phikit's own C, is imported wherever a
// kernel is called (PhiFormats and PhiEngine). No Swift package dependencies. Every target
// lists exactly the modules its files import (nothing reaches a module through another's
// re-export).
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
        .target(name: "CKernels", cSettings: kernelFlags),
        .target(name: "PhiFormats", dependencies: ["CKernels"]),
        .target(name: "PhiHub", dependencies: ["PhiFormats", "CCurl"]),
        // Tokenizer, chat templates, prompts: no model code, so an app or a server that only
        // tokenizes links PhiFormats and this.
        .target(name: "PhiText", dependencies: ["PhiFormats"]),
        .target(name: "PhiEngine", dependencies: ["PhiFormats", "CKernels"]),
        .target(name: "PhiKit", dependencies: ["PhiFormats", "PhiHub", "PhiText", "PhiEngine"]),
        // phikit serve: HTTP/1.1 on sockets (HTTP/), the OpenAI routes (OpenAI/), the scheduler
        // and the prompt cache (Scheduler/).
        .target(
            name: "PhiServer", dependencies: ["PhiKit", "PhiText", "PhiEngine", "PhiFormats"]),
        // The CLI reads GenerationParameters (PhiEngine) and prints UserFacingErrors (PhiFormats).
        .executableTarget(
            name: "phikit", dependencies: ["PhiKit", "PhiServer", "PhiEngine", "PhiFormats"]),
        // Timing tool for the inference core (decode/prefill tokens/s on a model directory).
        .executableTarget(
            name: "engine-bench", dependencies: ["PhiEngine", "PhiFormats", "CKernels"],
            path: "scripts/engine/EngineBench"),
        // Structured output's mask cost per token over the suite (make bench-structured).
        .executableTarget(
            name: "structured-bench", dependencies: ["PhiEngine", "PhiText", "PhiFormats"],
            path: "scripts/structured/StructuredBench"),
        // Before any test code runs, each test process gets a private HOME and TMPDIR and
        // loses the HF_*, PHIKIT_* and XDG_* variables that point at the user's folders (a C
        // constructor: Swift has no hook that runs before every suite).
        .target(name: "TestIsolation", path: "Tests/TestIsolation"),
        // Paths every test target shares: the repository and Tests/Fixtures (a missing
        // fixture fails the test that needs it).
        .target(name: "TestSupport", dependencies: ["TestIsolation"], path: "Tests/TestSupport"),
        .testTarget(
            name: "PhiFormatsTests", dependencies: ["PhiFormats", "CKernels", "TestSupport"],
            resources: [.copy("Fixtures")]),
        // The Hub look-alike (PhiHubTests/Server/hub_server.py) and its launcher, shared by
        // the Hub client's tests and the command-line tests.
        .target(
            name: "HubTestSupport", dependencies: ["TestIsolation"], path: "Tests/HubTestSupport"),
        .testTarget(
            name: "PhiHubTests", dependencies: ["PhiHub", "PhiFormats", "HubTestSupport"],
            exclude: ["Server"]),
        .testTarget(
            name: "PhiEngineTests",
            dependencies: ["PhiEngine", "PhiFormats", "CKernels", "TestSupport"],
            resources: [.copy("Fixtures")]),
        .testTarget(
            name: "PhiTextTests", dependencies: ["PhiText", "PhiFormats", "TestSupport"],
            resources: [.copy("Fixtures")]),
        .testTarget(
            name: "PhiKitTests",
            dependencies: [
                "PhiKit", "PhiHub", "PhiText", "PhiEngine", "PhiFormats", "TestSupport",
            ],
            resources: [.copy("Fixtures")]),
        // Drive the built binary; they import no library module.
        .testTarget(name: "CLITests", dependencies: ["HubTestSupport", "TestSupport"]),
        .testTarget(
            name: "PhiServerTests",
            dependencies: ["PhiServer", "PhiKit", "PhiText", "PhiEngine", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
