import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// `MemberTrust.refuseUntrustedSides`: the members in a merge, over real vaults opened in memory.
@Suite struct MemberTrustMergeTests {
    /// An unsigned vault of id `vaultID` at `generation`, as an open would give it.
    private func unsignedVault(_ vaultID: [UInt8], generation: UInt64) throws -> UnlockedVault {
        let vault = try VaultCodec.create(Vault(), slots: [(.password(password("pw"), testKDF), "")], now: 0, signed: false)
        vault.header.vaultID = vaultID
        vault.header.generation = generation
        return vault
    }

    private func trust(_ directory: TemporaryDirectory, firstSigned: UInt64?, vaultID: [UInt8]) throws -> MemberTrust {
        let trust = MemberTrust(state: StateFolder(path: directory.path("state")))
        try trust.update(vaultID) { record in
            record.accept(try! TrustCopy([try! TrustMember("alice")], generation: firstSigned ?? 1).evidence(), path: "/v", recordHeader: true)
            if firstSigned == nil { record.firstSigned = nil }
        }
        return trust
    }

    @Test func test_refuseUntrustedSides_anUnsignedSideInASignedVaultStopsTheMergeNamingIt() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let id = TrustCopy.vaultID
        let trust = try trust(directory, firstSigned: 5, vaultID: id)
        let old = try unsignedVault(id, generation: 3), new = try unsignedVault(id, generation: 7)
        #expect(throws: Never.self, "both sides older than the first signed seal: an old branch merges") {
            try trust.refuseUntrustedSides(ours: (old, "/v/o", "OURS"), theirs: (old, "/v/t", "THEIRS"), allowUntrusted: false)
        }
        do {
            try trust.refuseUntrustedSides(ours: (old, "/v/o", "OURS"), theirs: (new, "/v/t", "THEIRS"), allowUntrusted: false)
            Issue.record("an unsigned side past the first signed generation merged")
        } catch {
            #expect(error == .untrustedCopy(path: "THEIRS at /v/t", why: [.unsignedAfterSigned(firstSigned: 5)]))
            #expect(error.category == .stale, "exit 7")
        }
        #expect(throws: Never.self) {
            try trust.refuseUntrustedSides(ours: (old, "/v/o", "OURS"), theirs: (new, "/v/t", "THEIRS"), allowUntrusted: true)
        }
    }

    @Test func test_refuseUntrustedSides_refusesNothingWithoutARecord() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trust = MemberTrust(state: StateFolder(path: directory.path("state")))
        let side = try unsignedVault(TrustCopy.vaultID, generation: 9)
        #expect(throws: Never.self) {
            try trust.refuseUntrustedSides(ours: (side, "/v/o", "OURS"), theirs: (side, "/v/t", "THEIRS"), allowUntrusted: false)
        }
    }
}
