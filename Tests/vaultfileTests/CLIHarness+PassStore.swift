import Foundation
import TestSupport

// MARK: - pass stores for import tests

/// A `gpg` that "decrypts" by copying its stdin (the store's file), in `bin/` of the test's
/// folder; the environment that puts it first on the `PATH`.
func fakeGPG(_ cli: CLI) throws -> [String: String] {
    try FileManager.default.createDirectory(atPath: cli.path("bin"), withIntermediateDirectories: true)
    try cli.write("bin/gpg", bytes("#!/bin/sh\ncat\n"), mode: 0o700)
    return ["PATH": cli.path("bin") + ":/usr/bin:/bin"]
}

/// A pass store `folder` (its `.gpg-id`) holding `files` (name → text), as `fakeGPG` reads them.
func passStore(_ cli: CLI, _ folder: String, _ files: [String: String]) throws {
    try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true)
    try cli.write("\(folder)/.gpg-id", bytes("K\n"))
    for (name, text) in files { try cli.write("\(folder)/\(name).gpg", bytes(text)) }
}
