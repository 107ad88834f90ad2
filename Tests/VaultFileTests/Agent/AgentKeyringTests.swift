import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultAgent
@testable import VaultFormat
@testable import VaultModel

/// The agent's keys: every key of a vault id kept, only the one that verifies a header handed out,
/// idle expiry since the last hand-out, and forgetting.
@Suite struct AgentKeyringTests {
    /// A sealed vault's header bytes and file key; `rotatedFrom` gives a passwd'd version of it (same id, new key).
    private struct Sample {
        let header: [UInt8]
        let key: SecureBytes
        let vaultID: [UInt8]

        init(rotatedFrom other: UnlockedVault? = nil) throws {
            let unlocked = try other?.changePassword(to: password("new"), kdf: testKDF)
                ?? VaultCodec.create(try sampleVault(), password: password("pw"), kdf: testKDF)
            let bytes = try unlocked.seal()
            let parsed = try VaultHeader.parse(bytes, path: "t")
            header = Array(bytes[0..<parsed.length])
            key = unlocked.fileKey
            vaultID = parsed.header.vaultID
            opened = unlocked
        }

        let opened: UnlockedVault

        func handOver(timeout: UInt32 = 60, onlyIfHeld: Bool = false, path: String = "/v", confirm: String = "",
                      heldKey: SecureBytes? = nil) -> AgentKeyHandOver {
            AgentKeyHandOver(vaultID: vaultID, fileKey: key, heldKey: heldKey, timeoutSeconds: timeout, onlyIfHeld: onlyIfHeld, path: path,
                             confirmCommand: confirm)
        }
    }

    // MARK: - add and match

    @Test func test_match_handsOutTheKeyThatVerifiesTheHeader() throws {
        let sample = try Sample()
        var keyring = AgentKeyring()
        #expect(try keyring.add(sample.handOver(), now: 0) == .held)
        let match = try #require(try keyring.match(header: sample.header, now: 1))
        #expect(match.fileKey.constantTimeEquals(sample.key) && match.vaultID == sample.vaultID && match.confirmCommand == nil)
    }

    @Test func test_match_keepsEveryKeyOfAnIdAndGivesOnlyTheVerifyingOne() throws {
        let old = try Sample()
        let new = try Sample(rotatedFrom: old.opened)
        #expect(new.vaultID == old.vaultID)
        var keyring = AgentKeyring()
        try keyring.add(old.handOver(), now: 0)
        #expect(try keyring.add(new.handOver(onlyIfHeld: true, heldKey: old.key), now: 0) == .held)
        #expect(keyring.keyCount == 2)
        #expect(try keyring.match(header: old.header, now: 1)?.fileKey.constantTimeEquals(old.key) == true)
        #expect(try keyring.match(header: new.header, now: 1)?.fileKey.constantTimeEquals(new.key) == true)
    }

    @Test func test_add_takesAKeyOnceAndOnlyIfHeldAddsNothingNew() throws {
        let sample = try Sample()
        var keyring = AgentKeyring()
        #expect(try keyring.add(sample.handOver(onlyIfHeld: true), now: 0) == .notHeld)
        #expect(keyring.isEmpty)
        try keyring.add(sample.handOver(), now: 0)
        try keyring.add(sample.handOver(), now: 0)
        #expect(keyring.keyCount == 1)
    }

    @Test func test_match_answersNothingForAnotherVaultOrAForgedHeader() throws {
        let held = try Sample(), other = try Sample()
        var keyring = AgentKeyring()
        try keyring.add(held.handOver(), now: 0)
        #expect(try keyring.match(header: other.header, now: 0) == nil)
        // The other vault's header under the held vault's id: parses, but no held key verifies it.
        var forged = other.header
        forged.replaceSubrange(12..<28, with: held.vaultID)
        fixChecksum(&forged)
        #expect(try keyring.match(header: forged, now: 0) == nil)
    }

    // MARK: - A vault held already

    @Test func test_add_forAHeldVaultWithoutOneOfItsKeysIsRefusedAndChangesNothing() throws {
        let held = try Sample()
        var keyring = AgentKeyring()
        try keyring.add(held.handOver(timeout: 60, confirm: "ask-me"), now: 0)
        // Another process of the user: a header for the held id with a MAC under a key it chose.
        let chosen = SecureBytes(copying: randomBytes(count: 32))
        var forged = try VaultHeader.parse(held.header, path: "t").header
        forged.mac = VaultCodec.headerMAC(forged, fileKey: chosen)
        #expect(VaultCodec.verifies(forged, fileKey: chosen), "no proof: anyone makes such a header")
        let attack = AgentKeyHandOver(vaultID: held.vaultID, fileKey: chosen, timeoutSeconds: 0, onlyIfHeld: false, path: "/x", confirmCommand: "")
        var copy = keyring
        #expect(throws: AgentKeyring.Refusal.unproven) { try copy.add(attack, now: 1) }
        var withWrongHeldKey = attack
        withWrongHeldKey.heldKey = SecureBytes(copying: randomBytes(count: 32))
        #expect(throws: AgentKeyring.Refusal.unproven) { try copy.add(withWrongHeldKey, now: 1) }
        var onlyIfHeld = attack
        onlyIfHeld.onlyIfHeld = true
        #expect(throws: AgentKeyring.Refusal.unproven) { try copy.add(onlyIfHeld, now: 1) }
        // Nothing changed: one key, the timeout, the path and the confirm command as they were.
        #expect(copy.keyCount == 1 && copy.status(now: 1).map(\.timeoutSeconds) == [60] && copy.status(now: 1).map(\.path) == ["/v"])
        #expect(try copy.match(header: held.header, now: 1)?.confirmCommand == "ask-me")
        #expect(try copy.match(header: forged.encoded(), now: 1) == nil)
    }

    @Test func test_add_thatWeakensAHeldVaultNeedsItsConfirmCommand() throws {
        let old = try Sample()
        let new = try Sample(rotatedFrom: old.opened)
        var keyring = AgentKeyring()
        try keyring.add(old.handOver(timeout: 60, confirm: "ask-me"), now: 0)
        // The same settings, a shorter timeout, a new path: nothing weakens, nothing to ask.
        #expect(try keyring.add(old.handOver(timeout: 60, confirm: "ask-me"), now: 1) == .held)
        #expect(try keyring.add(old.handOver(timeout: 30, path: "/w", confirm: "ask-me"), now: 1) == .held)
        let ask = AgentKeyring.AddOutcome.needsApproval(command: "ask-me")
        let weaker = [old.handOver(timeout: 31, confirm: "ask-me"), old.handOver(timeout: 0, confirm: "ask-me"),
                      old.handOver(timeout: 30), old.handOver(timeout: 30, confirm: "other"),
                      new.handOver(onlyIfHeld: true, heldKey: old.key), new.handOver(timeout: 30, confirm: "ask-me", heldKey: old.key)]
        for handOver in weaker {
            var copy = keyring
            #expect(try copy.add(handOver, now: 2) == ask)
            #expect(try copy.add(handOver, now: 2, approvedBy: "other") == ask, "only the vault's own command approves")
            #expect(copy.keyCount == 1 && copy.status(now: 2).map(\.timeoutSeconds) == [30], "nothing changed before the approval")
            #expect(try copy.add(handOver, now: 2, approvedBy: "ask-me") == .held)
        }
        #expect(try keyring.add(old.handOver(timeout: 0), now: 3, approvedBy: "ask-me") == .held)
        #expect(try keyring.match(header: old.header, now: 3)?.confirmCommand == nil && keyring.status(now: 3).map(\.timeoutSeconds) == [0])
        // Without a confirm command there is nothing to ask; a held key is still needed.
        #expect(try keyring.add(new.handOver(timeout: 5, confirm: "", heldKey: old.key), now: 4) == .held)
        #expect(keyring.keyCount == 2)
    }

    @Test func test_match_refusesBytesThatAreNotExactlyAHeader() throws {
        let sample = try Sample()
        var keyring = AgentKeyring()
        try keyring.add(sample.handOver(), now: 0)
        #expect(throws: VaultError.notAVault(path: "the header sent to the agent")) { try keyring.match(header: [1, 2, 3], now: 0) }
        #expect(throws: VaultError.headerDamaged("1 bytes follow the header sent to the agent")) {
            try keyring.match(header: sample.header + [0], now: 0)
        }
    }

    @Test func test_add_refusesMalformedKeysAndTooManyVaults() throws {
        var keyring = AgentKeyring()
        let short = AgentKeyHandOver(vaultID: [1], fileKey: SecureBytes(count: 32), timeoutSeconds: 0, onlyIfHeld: false, path: "", confirmCommand: "")
        var copy = keyring
        #expect(throws: AgentKeyring.Refusal.malformed("a vault id is 16 bytes")) { try copy.add(short, now: 0) }
        for index in 0..<AgentKeyring.maxVaults {
            let id = withUnsafeBytes(of: UInt64(index)) { Array($0) } + Array(repeating: 0, count: 8)
            try keyring.add(AgentKeyHandOver(vaultID: id, fileKey: SecureBytes(count: 32), timeoutSeconds: 0, onlyIfHeld: false,
                                             path: "", confirmCommand: ""), now: 0)
        }
        let extra = try Sample().handOver()
        copy = keyring
        #expect(throws: AgentKeyring.Refusal.tooManyVaults) { try copy.add(extra, now: 0) }
    }

    // MARK: - Idle expiry

    @Test func test_expire_forgetsAVaultIdleForItsTimeoutSinceTheLastHandOut() throws {
        let sample = try Sample()
        var keyring = AgentKeyring()
        try keyring.add(sample.handOver(timeout: 10), now: 100)
        #expect(keyring.nextExpiry == 110)
        let match = try #require(try keyring.match(header: sample.header, now: 108))
        let handed = keyring.handedOut(match, path: "/elsewhere", now: 108)
        #expect(handed)
        #expect(keyring.status(now: 115).first?.idleSecondsLeft == 3)
        #expect(keyring.status(now: 115).first?.path == "/elsewhere")
        #expect(try keyring.match(header: sample.header, now: 117.9) != nil, "looking without handing out does not count as use")
        #expect(try keyring.match(header: sample.header, now: 118) == nil)
        let expired = keyring.expire(now: 118)
        #expect(expired == 1 && keyring.isEmpty)
        let handedAfter = keyring.handedOut(match, path: "/v", now: 118)
        #expect(!handedAfter, "a forgotten key is never handed out")
    }

    @Test func test_expire_keepsAVaultWithoutTimeout() throws {
        let sample = try Sample()
        var keyring = AgentKeyring()
        try keyring.add(sample.handOver(timeout: 0), now: 0)
        #expect(keyring.nextExpiry == nil)
        let expired = keyring.expire(now: 1e9)
        #expect(expired == 0)
        #expect(try keyring.match(header: sample.header, now: 1e9) != nil)
    }

    // MARK: - Forgetting and status

    @Test func test_forget_dropsOneVaultOrAll() throws {
        let first = try Sample(), second = try Sample()
        var keyring = AgentKeyring()
        try keyring.add(first.handOver(path: "/a"), now: 0)
        try keyring.add(second.handOver(path: "/b", confirm: "true"), now: 0)
        #expect(try keyring.match(header: second.header, now: 0)?.confirmCommand == "true")
        #expect(keyring.status(now: 0).map(\.path) == ["/a", "/b"])
        let forgotten = (keyring.forget(vaultID: first.vaultID), keyring.forget(vaultID: first.vaultID))
        #expect(forgotten == (1, 0))
        #expect(try keyring.match(header: first.header, now: 0) == nil)
        let all = keyring.forgetAll()
        #expect(all == 1)
        #expect(keyring.isEmpty)
    }
}

extension AgentKeyring.Match: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.vaultID == rhs.vaultID && lhs.fileKey === rhs.fileKey }
}
