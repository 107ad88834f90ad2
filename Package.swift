// swift-tools-version:6.1
import PackageDescription

/// vaultfile: an offline, single-file encrypted vault with a pipe-friendly CLI.
///
/// Modules depend in one direction only: vaultfile → {VaultFile, VaultInterchange, VaultAgent} →
/// VaultFormat → VaultModel → KDF → SecureMemory → C shims. VaultFile (storage, state, merge),
/// VaultInterchange and VaultAgent each see VaultFormat and VaultModel, never each other;
/// vaultfile also uses LinearRegex, which depends on nothing.
let package = Package(
    name: "vaultfile",
    products: [
        .executable(name: "vaultfile", targets: ["vaultfile"]),
        .library(name: "VaultFile", targets: ["VaultModel", "VaultFormat", "VaultFile", "VaultInterchange", "VaultAgent"]),
        .library(name: "KDF", targets: ["KDF"]),
        .library(name: "SecureMemory", targets: ["SecureMemory"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // ML-KEM-768, X-Wing and HPKE for age's post-quantum mlkem768x25519 keys (VaultPQ only).
        .package(url: "https://github.com/apple/swift-crypto", exact: "4.5.2"),
    ],
    targets: [
        // MARK: - C shims
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .systemLibrary(
            name: "CArgon2",
            pkgConfig: "libargon2",
            providers: [.apt(["libargon2-dev"])]
        ),
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(name: "CPlatform"),
        // bcrypt_pbkdf's Blowfish loops, header-only C (Sources/CBlowfish/blowfish.h says why).
        .systemLibrary(name: "CBlowfish"),

        // MARK: - Swift modules
        .target(
            name: "SecureMemory",
            dependencies: ["CSodium"]
        ),
        .target(
            name: "KDF",
            dependencies: ["SecureMemory", "CSodium", "CArgon2", "CLibCrypto"]
        ),

        // MARK: - The vault library, bottom up
        .target(name: "VaultModel", dependencies: ["KDF", "SecureMemory"]),
        // age's post-quantum hybrid KEM (X-Wing, HPKE): the one target that sees swift-crypto.
        .target(name: "VaultPQ", dependencies: ["SecureMemory", .product(name: "Crypto", package: "swift-crypto")]),
        .target(name: "VaultFormat", dependencies: ["VaultModel", "VaultPQ", "KDF", "SecureMemory", "CSodium", "CLibCrypto", "CBlowfish", "CPlatform"]),
        .target(name: "VaultFile", dependencies: ["VaultFormat", "VaultModel", "KDF", "SecureMemory"]),
        .target(name: "VaultInterchange", dependencies: ["VaultFormat", "VaultModel", "KDF", "SecureMemory", "CZlib"]),
        .target(name: "VaultAgent", dependencies: ["VaultFormat", "VaultModel", "SecureMemory"]),
        // The linear-time regular expressions of `search --regex`: pure Swift, no dependency.
        .target(name: "LinearRegex"),

        // MARK: - The command line
        .executableTarget(
            name: "vaultfile",
            dependencies: [
                "VaultFile",
                "VaultInterchange",
                "VaultAgent",
                "VaultFormat",
                "VaultModel",
                "KDF",
                "SecureMemory",
                "LinearRegex",
                "CPlatform",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: - Tests
        .systemLibrary(name: "CTestSupport", path: "Tests/CTestSupport"),
        .target(name: "TestSupport", dependencies: ["CTestSupport"], path: "Tests/TestSupport"),
        .testTarget(name: "SecureMemoryTests", dependencies: ["SecureMemory", "TestSupport"]),
        .testTarget(name: "KDFTests", dependencies: ["KDF", "SecureMemory", "TestSupport"]),
        .testTarget(name: "VaultFileTests", dependencies: ["VaultModel", "VaultFormat", "VaultFile", "VaultInterchange", "VaultAgent",
                                                           "KDF", "SecureMemory", "CSodium", "TestSupport"]),
        .testTarget(name: "LinearRegexTests", dependencies: ["LinearRegex", "TestSupport"]),
        .testTarget(name: "vaultfileTests", dependencies: ["vaultfile", "VaultModel", "VaultFormat", "VaultFile", "VaultInterchange",
                                                           "VaultAgent", "KDF", "SecureMemory", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// The libFuzzer target exists only when asked for: a plain `swift build` cannot link it.
// `make fuzz` sets VAULTFILE_FUZZ=1 and builds it with --sanitize=fuzzer --sanitize=address.
if Context.environment["VAULTFILE_FUZZ"] == "1" {
    package.targets.append(.executableTarget(name: "VaultFileFuzz", dependencies: ["VaultModel", "VaultFormat", "VaultAgent", "VaultFile", "VaultInterchange",
                                                                                "KDF", "SecureMemory", "VaultPQ"],
                                                   path: "Fuzz/VaultFileFuzz"))
}
