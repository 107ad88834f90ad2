import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// Retired file keys (`RetiredKeys`, `RollbackCheck`): a rotation records the key it retires,
/// a copy still sealed under it is read with a finding and written never (but rotated), and a
/// merge with the rotated copy is sealed under the newest key.
@Suite struct RetiredKeysTests {
    /// A folder with `team.vault` (recipients alice and bob) and `old.vault`, its copy from before
    /// `rotate` (slot rm of bob, through `replaceKeys` and a check with generations off, as in git).
    private struct Setup {
        let directory: TemporaryDirectory
        let retired: RetiredKeys
        let alice = AgeIdentity.generate(), bob = AgeIdentity.generate()
        var asAlice: [UnlockCredential] { [UnlockCredential(.ageIdentity(alice), source: "--identity alice.txt")] }
        var team: VaultStore { VaultStore(path: directory.path("team.vault")) }
        var old: VaultStore { VaultStore(path: directory.path("old.vault")) }

        init() throws {
            directory = try TemporaryDirectory()
            retired = RetiredKeys(state: StateFolder(path: directory.path("state")))
            try team.create(try sampleVault(), slots: [(.recipient(alice.recipient), "alice"), (.recipient(bob.recipient), "bob")], now: 0)
            try AtomicFileWriter().write(try team.read().bytes, to: directory.path("old.vault"), finalLink: .follow)
        }

        /// A check as a command inside a git work tree makes it: retired keys only.
        func check() -> RollbackCheck {
            RollbackCheck(seen: SeenGenerations(state: retired.state), comparesGenerations: false)
        }

        func removeBob(from store: VaultStore, check: RollbackCheck? = nil) throws {
            try store.replaceKeys(credentials: asAlice, limits: testLimits, rollback: check ?? self.check()) { unlocked in
                (try unlocked.rotated(removing: [try unlocked.slotIndex(named: "bob")], now: 1).vault, ())
            }
        }

        func set(_ store: VaultStore, _ name: String, check: RollbackCheck? = nil) throws {
            try store.update(credentials: asAlice, limits: testLimits, rollback: check ?? self.check()) { unlocked in
                try unlocked.vault.setValue(Array("value".utf8), for: name)
            }
        }
    }

    // MARK: - fileKeyID

    @Test func test_fileKeyID_isStableForAKeyAndDiffersAfterARotation() throws {
        let vault = try VaultCodec.create(try sampleVault(), password: password("pw"), kdf: testKDF)
        #expect(vault.fileKeyID.count == 16)
        let reopened = try VaultCodec.open(try vault.seal(), path: "v", password: password("pw"), limits: testLimits)
        #expect(reopened.fileKeyID == vault.fileKeyID)
        #expect(try reopened.rotated(now: 0).vault.fileKeyID != vault.fileKeyID)
    }

    @Test func test_fileKeyID_revealsNeitherTheKeyNorAnotherSubkey() throws {
        let vault = try VaultCodec.create(try sampleVault(), password: password("pw"), kdf: testKDF)
        let key = vault.fileKey.withUnsafeBytes { Array($0) }
        #expect(!key.starts(with: vault.fileKeyID))
        for purpose in [Subkey.headerMAC, Subkey.payloadStream, Subkey.fingerprint, MetadataBlock.subkey] {
            #expect(!Subkey.derive(from: vault.fileKey, purpose).withUnsafeBytes { Array($0) }.starts(with: vault.fileKeyID))
        }
    }

    // MARK: - retire

    @Test func test_retire_recordsAnIdOnceWithItsFirstTime() throws {
        let folder = try TemporaryDirectory(); defer { folder.remove() }
        let retired = RetiredKeys(state: StateFolder(path: folder.path("state")))
        let vaultID = [UInt8](repeating: 1, count: 16), key = [UInt8](repeating: 2, count: 16)
        #expect(try retired.retiredAt(key, vault: vaultID) == nil)
        #expect(try retired.retire(key, vault: vaultID, now: 100))
        #expect(try !retired.retire(key, vault: vaultID, now: 200))
        #expect(try retired.retiredAt(key, vault: vaultID) == 100)
        #expect(try retired.retiredAt(key, vault: [UInt8](repeating: 3, count: 16)) == nil, "per vault id")
        let text = String(decoding: try #require(try retired.state.read(RetiredKeys.recordName(vaultID))), as: UTF8.self)
        #expect(text == "vaultfile-retired-keys 3\nk " + String(repeating: "02", count: 16) + " 100\n")
    }

    @Test func test_retire_keepsTheNewestThirtyTwoIds() throws {
        let folder = try TemporaryDirectory(); defer { folder.remove() }
        let retired = RetiredKeys(state: StateFolder(path: folder.path("state")))
        let vaultID = [UInt8](repeating: 1, count: 16)
        for index in 0..<70 { try retired.retire([UInt8](repeating: UInt8(index), count: 16), vault: vaultID, now: Int64(index)) }
        #expect(try retired.retiredAt([UInt8](repeating: 37, count: 16), vault: vaultID) == nil)
        #expect(try retired.retiredAt([UInt8](repeating: 38, count: 16), vault: vaultID) == 38)
        #expect(try retired.retiredAt([UInt8](repeating: 69, count: 16), vault: vaultID) == 69)
    }

    @Test func test_parse_skipsLinesItDidNotWrite() {
        let id = String(repeating: "ab", count: 16)
        let bytes = Array("vaultfile-retired-keys 1\n\(id) 5\nnot a line\n\(id.uppercased()) 6\n\(id) -1\n".utf8)
        #expect(RetiredKeys.Record(parsing: bytes).retiredFileKeys == [.init(id: id, at: 5, superseded: false)])
        #expect(RetiredKeys.Record(parsing: Array("something else\n\(id) 5\n".utf8)) == RetiredKeys.Record())
    }

    // MARK: - RollbackCheck

    @Test func test_replaceKeys_retiresTheOldKeyAfterTheRename() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let before = try setup.team.open(credentials: setup.asAlice, limits: testLimits)
        try setup.removeBob(from: setup.team)
        let after = try setup.team.open(credentials: setup.asAlice, limits: testLimits)
        #expect(try setup.retired.retiredAt(before.fileKeyID, vault: before.header.vaultID) != nil)
        #expect(try setup.retired.retiredAt(after.fileKeyID, vault: after.header.vaultID) == nil)
    }

    @Test func test_update_underARetiredKeyIsRefusedAndWritesNothing() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        try setup.removeBob(from: setup.team)
        let bytes = try setup.old.read().bytes
        let check = setup.check()
        #expect { try setup.set(setup.old, "new", check: check) } throws: { error in
            guard case VaultError.sealedUnderRetiredKey(let path, _) = error else { return false }
            return path == setup.directory.path("old.vault") && (error as! VaultError).category == .stale
        }
        #expect(try setup.old.read().bytes == bytes, "the file is byte-identical")
        #expect(check.findings.isEmpty, "the error says it all")
    }

    @Test func test_open_underARetiredKeyIsReadWithAFinding() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        try setup.removeBob(from: setup.team)
        let check = setup.check()
        let unlocked = try setup.old.open(credentials: setup.asAlice, limits: testLimits, rollback: check)
        guard case .retiredKey(let path, _)? = check.findings.first else { Issue.record("\(check.findings)"); return }
        #expect(path == setup.directory.path("old.vault") && check.findings.count == 1)
        #expect(try !FileManager.default.fileExists(atPath: setup.directory.path("state/") + SeenGenerations.recordName(unlocked.header.vaultID)),
                "with generations off nothing about generations is recorded")
    }

    @Test func test_rotation_ofACopyUnderARetiredKeyIsAllowedAndThenItWrites() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        try setup.removeBob(from: setup.team)
        // A rotation that would keep bob's slot, retired here, is refused (issue 39, F7); one that removes it goes through.
        #expect { try setup.old.replaceKeys(credentials: setup.asAlice, limits: testLimits, rollback: setup.check()) { unlocked in
            (try unlocked.rotated(now: 2).vault, ())
        } } throws: { error in
            guard case VaultError.refusedCopy(_, .wouldKeepRetiredSlotKey) = error else { return false }
            return true
        }
        try setup.removeBob(from: setup.old)
        let check = setup.check()
        try setup.set(setup.old, "new", check: check)
        #expect(check.findings.isEmpty)
    }

    // MARK: - Merges

    /// git's merge driver, both ways round, and `vaultfile merge` without a base: the copy under
    /// the retired key gives way to the rotated one.
    @Test(arguments: [(base: true, rotatedIsOurs: false), (base: true, rotatedIsOurs: true), (base: false, rotatedIsOurs: false)])
    func test_merge_withTheRotatedCopyIsSealedUnderTheNewestKey(base: Bool, rotatedIsOurs: Bool) throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        try AtomicFileWriter().write(try setup.team.read().bytes, to: setup.directory.path("base.vault"), finalLink: .follow)
        try setup.set(setup.old, "edited-before")
        try setup.removeBob(from: setup.team)
        let rotated = try setup.team.open(credentials: setup.asAlice, limits: testLimits)
        let (ours, theirs) = rotatedIsOurs ? ("team.vault", "old.vault") : ("old.vault", "team.vault")
        let path = setup.directory.path(ours)
        if base {
            _ = try VaultStore.mergeFiles(base: setup.directory.path("base.vault"), ours: path, theirs: setup.directory.path(theirs),
                                          credentials: setup.asAlice, limits: testLimits, retiredKeys: setup.retired)
        } else {
            _ = try VaultStore(path: path).mergeCopy(theirs: setup.directory.path(theirs), credentials: setup.asAlice, limits: testLimits,
                                                     rollback: setup.check())
        }
        let merged = try VaultStore(path: path).open(credentials: setup.asAlice, limits: testLimits)
        #expect(merged.fileKeyID == rotated.fileKeyID)
        #expect(merged.vault.entry("edited-before") != nil)
        #expect(throws: VaultError.self) {
            _ = try VaultStore(path: path).open(credentials: [UnlockCredential(.ageIdentity(setup.bob), source: "bob")], limits: testLimits)
        }
        try setup.set(VaultStore(path: path), "after-merge")
    }

    @Test func test_mergeFiles_thatNoSourceOpensNamesTheSourcesTriedNotAPassword() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let carol = [UnlockCredential(.ageIdentity(AgeIdentity.generate()), source: "--identity carol.txt"),
                     UnlockCredential(.keyfile(path: setup.directory.path("none")), source: "VAULTFILE_KEYFILE (none)")]
        let path = setup.directory.path("team.vault")
        #expect { _ = try VaultStore.mergeFiles(base: path, ours: path, theirs: setup.directory.path("old.vault"), credentials: carol, limits: testLimits) } throws: { error in
            let text = "\(error)"
            return text.contains("the unlock sources tried (--identity carol.txt, VAULTFILE_KEYFILE (none))") && !text.contains("password")
        }
    }
}
