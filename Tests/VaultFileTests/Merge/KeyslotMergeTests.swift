import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// Merging a branch that rotated the file key (slot rm) with one that edited entries.
@Suite struct KeyslotMergeTests {
    /// Both ways round: the removal on THEIRS (merged into the branch that edited), and on OURS.
    @Test(arguments: [false, true])
    func test_mergeFiles_aRemovalAndAnEditMergeAndTheRemovedSecretCannotOpenTheResult(removalIsOurs: Bool) throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let alice = AgeIdentity.generate(), bob = AgeIdentity.generate()
        let base = try VaultCodec.create(try sampleVault(), slots: [(.recipient(alice.recipient), "alice"), (.recipient(bob.recipient), "bob")], now: 0)
        let baseBytes = try base.seal()
        let asAlice = [UnlockCredential(.ageIdentity(alice), source: "alice")]
        // THEIRS removed Bob (a new file key); OURS added an entry under the old key.
        let theirs = try VaultCodec.open(baseBytes, path: "t", credentials: asAlice, limits: testLimits)
        let removed = try theirs.rotated(removing: [1], now: 1).vault
        let ours = try VaultCodec.open(baseBytes, path: "o", credentials: asAlice, limits: testLimits)
        try ours.vault.setValue(Array("added on ours".utf8), for: "ours/new", now: 2)
        let sides = [try ours.seal(), try removed.seal()]
        for (name, bytes) in [("base", baseBytes), ("ours", sides[removalIsOurs ? 1 : 0]), ("theirs", sides[removalIsOurs ? 0 : 1])] {
            try Data(bytes).write(to: folder.url.appendingPathComponent(name))
        }
        let conflicts = try VaultStore.mergeFiles(base: folder.path("base"), ours: folder.path("ours"), theirs: folder.path("theirs"),
                                                  credentials: asAlice, limits: testLimits)
        #expect(conflicts.isEmpty)
        let merged = Array(try Data(contentsOf: folder.url.appendingPathComponent("ours")))
        let opened = try VaultCodec.open(merged, path: "m", credentials: asAlice, limits: testLimits)
        #expect(opened.vault.entry("ours/new")?.value == Array("added on ours".utf8))
        #expect(opened.slots.map(\.label) == ["alice"])
        #expect(opened.fileKey.constantTimeEquals(removed.fileKey))
        #expect(throws: VaultError.noKeyslotOpens(sources: ["bob"], unknownTypes: [])) {
            _ = try VaultCodec.open(merged, path: "m", credentials: [UnlockCredential(.ageIdentity(bob), source: "bob")], limits: testLimits)
        }
    }
}
