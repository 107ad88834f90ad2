import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// `MemberTrust.judge` and `Record.accept`: which signed copies this machine trusts as written by
/// the vault's members, over evidence built by hand with real XEd25519 attestations.
@Suite struct MemberTrustJudgementTests {
    // MARK: - judge: trusted copies

    @Test func test_judge_firstOpenPinsWithANotice() throws {
        let alice = try TrustMember("alice"), bob = try TrustMember("bob")
        let judgement = try judged(TrustCopy([alice, bob]), by: nil)
        #expect(judgement.isTrusted && judgement.firstOpen && judgement.signed)
        #expect(judgement.signerFingerprint == alice.key.fingerprint)
        #expect(judgement.signerFingerprint.hasPrefix("age1"))
        var record = MemberTrust.Record()
        record.accept(try TrustCopy([alice, bob]).evidence(), path: "/v/team.vault", recordHeader: true)
        #expect(record.pinned.map(\.key) == [alice.key, bob.key])
        #expect(record.pinned.map(\.label) == ["alice", "bob"])
        #expect(record.firstSigned == 1)
        #expect(record.paths == ["/v/team.vault"])
    }

    @Test func test_judge_aCopySignedByAPinnedMemberWithPinnedSlotsIsTrusted() throws {
        let alice = try TrustMember("alice"), bob = try TrustMember("bob")
        let record = try pinnedRecord([alice, bob])
        let judgement = try judged(TrustCopy([alice, bob], signer: bob, generation: 2), by: record)
        #expect(judgement.isTrusted && !judgement.firstOpen)
        #expect(judgement.traced.isEmpty, "pinned slots need no attestation checked")
    }

    @Test func test_judge_carolAddedByAPinnedMemberIsTrustedWithoutBeingSeen() throws {
        let alice = try TrustMember("alice"), bob = try TrustMember("bob"), carol = try TrustMember("carol", type: 4)
        let record = try pinnedRecord([alice, bob])
        var copy = TrustCopy([alice, bob], signer: carol, generation: 3)
        copy.slots.append((carol, alice, nil))
        let judgement = try judged(copy, by: record)
        #expect(judgement.findings == [])
        #expect(judgement.traced == [2])
    }

    @Test func test_judge_aChainOfAddersFromAPinnedMemberTraces() throws {
        let alice = try TrustMember("alice"), carol = try TrustMember("carol"), dave = try TrustMember("dave")
        let record = try pinnedRecord([alice])
        var copy = TrustCopy([alice], signer: dave, generation: 4)
        copy.slots += [(dave, carol, nil), (carol, alice, nil)]
        let judgement = try judged(copy, by: record)
        #expect(judgement.isTrusted, "dave was added by carol, whom alice added, listed after him")
        #expect(judgement.traced.sorted() == [1, 2])
    }

    // MARK: - judge: signers

    @Test func test_judge_anOutsidersCopyIsUnknownSignerAndUntracedSlot() throws {
        let alice = try TrustMember("alice"), bob = try TrustMember("bob"), eve = try TrustMember("eve")
        let record = try pinnedRecord([alice, bob])
        var copy = TrustCopy([alice, bob], signer: eve, generation: 9)
        copy.slots.append((eve, nil, nil))
        let judgement = try judged(copy, by: record)
        #expect(judgement.findings == [.unknownSigner(fingerprint: eve.key.fingerprint),
                                       .untracedSlot(slot: 2, label: "eve", fingerprint: eve.key.fingerprint, previous: nil)])
    }

    @Test func test_judge_cyclesOfAttestationsNeverTrace() throws {
        let alice = try TrustMember("alice"), eve = try TrustMember("eve"), mallory = try TrustMember("mallory")
        let record = try pinnedRecord([alice])
        var copy = TrustCopy([alice], signer: eve, generation: 2)
        copy.slots += [(eve, mallory, nil), (mallory, eve, nil)]
        let judgement = try judged(copy, by: record)
        #expect(judgement.findings.contains(.unknownSigner(fingerprint: eve.key.fingerprint)))
        #expect(judgement.findings.filter { if case .untracedSlot = $0 { return true } else { return false } }.count == 2)
        #expect(judgement.traced.isEmpty)
    }

    @Test func test_judge_aRelabelledSlotWhoseAttestationFailsIsUntraced() throws {
        let alice = try TrustMember("alice"), bob = try TrustMember("bob"), eve = try TrustMember("eve")
        let record = try pinnedRecord([alice, bob])
        var copy = TrustCopy([alice, bob], signer: alice, generation: 2)
        // Eve's key shown as "bob", with alice's attestation of the label "eve": the label is in what alice signed.
        copy.slots.append((eve, alice, "bob"))
        let judgement = try judged(copy, by: record)
        #expect(judgement.findings == [.untracedSlot(slot: 2, label: "bob", fingerprint: eve.key.fingerprint, previous: nil)])
    }

    @Test func test_judge_aPinnedSlotWhoseKeyChangedNamesBothFingerprints() throws {
        let alice = try TrustMember("alice"), bob = try TrustMember("bob"), eve = try TrustMember("bob")
        let record = try pinnedRecord([alice, bob])
        let judgement = try judged(TrustCopy([alice, eve], generation: 2), by: record)
        #expect(judgement.findings == [.untracedSlot(slot: 1, label: "bob", fingerprint: eve.key.fingerprint, previous: bob.key.fingerprint)])
    }

    @Test func test_judge_aSelfResaltIsTrustedAndRetiresTheOldKey() throws {
        let alice = try TrustMember("alice", type: 2), bob = try TrustMember("bob")
        var record = try pinnedRecord([alice, bob])
        let newAlice = try alice.resalted()
        var resalt = TrustCopy([newAlice, bob], adder: nil, signer: alice, generation: 2)
        resalt.slots[0].adder = alice
        resalt.replaced = alice
        #expect(try judged(resalt, by: record).isTrusted)
        record.accept(try resalt.evidence(), path: "/v/team.vault", recordHeader: true)
        #expect(record.retired.map(\.id) == [alice.key.id])
        #expect(record.pinned.map(\.key) == [newAlice.key, bob.key])
        #expect(try judged(resalt, by: record).isTrusted, "the re-salt itself, opened again, is still trusted")
        // The old key signs nothing more: another copy signed with it is refused.
        var replay = TrustCopy([newAlice, bob], signer: alice, generation: 3)
        replay.slots[0].adder = alice
        replay.replaced = alice
        #expect(try judged(replay, by: record).findings == [.retiredSigner(fingerprint: alice.key.fingerprint)])
    }

    // MARK: - judge: removals

    @Test func test_judge_aTombstoneInTheCopyRefusesTheSignerAndTheSlot() throws {
        let alice = try TrustMember("alice"), bob = try TrustMember("bob"), mallory = try TrustMember("mallory")
        let record = try pinnedRecord([alice, bob, mallory])
        var signedByHer = TrustCopy([alice, bob], signer: mallory, generation: 5)
        signedByHer.slots.append((mallory, nil, nil))
        signedByHer.tombstones = [Tombstone(removed: mallory.key.id, remover: alice.key.id, generation: 4)]
        #expect(try judged(signedByHer, by: record).findings == [.removedSigner(fingerprint: mallory.key.fingerprint, generation: 4),
                                                                  .removedKeyInside(slot: 2, fingerprint: mallory.key.fingerprint, generation: 4)])
        var holdingHer = TrustCopy([alice, bob, mallory], signer: alice, generation: 5)
        holdingHer.tombstones = signedByHer.tombstones
        #expect(try judged(holdingHer, by: record).findings == [.removedKeyInside(slot: 2, fingerprint: mallory.key.fingerprint, generation: 4)])
    }

    @Test func test_judge_aTombstoneLearnedHereRefusesHerPlantedCopy() throws {
        let alice = try TrustMember("alice"), bob = try TrustMember("bob"), mallory = try TrustMember("mallory")
        var record = try pinnedRecord([alice, bob, mallory])
        var removal = TrustCopy([alice, bob], signer: alice, generation: 2)
        removal.tombstones = [Tombstone(removed: mallory.key.id, remover: alice.key.id, generation: 2)]
        #expect(try judged(removal, by: record).isTrusted)
        record.accept(try removal.evidence(), path: "/v/team.vault", recordHeader: true)
        #expect(record.removed.map(\.id) == [mallory.key.id] && record.retired.isEmpty, "a removal is not a retirement")
        // Her planted copy, higher generation, without the tombstone, signed by her.
        let planted = TrustCopy([alice, bob, mallory], signer: mallory, generation: 50)
        let judgement = try judged(planted, by: record)
        #expect(judgement.findings.first == .removedSigner(fingerprint: mallory.key.fingerprint, generation: 2))
        #expect(judgement.findings.contains(.removedKeyInside(slot: 2, fingerprint: mallory.key.fingerprint, generation: 2)))
    }

    @Test func test_accept_learnsTombstonesFromAnOlderTrustedCopyWithoutRepinningIt() throws {
        let alice = try TrustMember("alice"), bob = try TrustMember("bob"), carol = try TrustMember("carol"), mallory = try TrustMember("mallory")
        var record = try pinnedRecord([alice, bob, carol], generation: 10)
        var older = TrustCopy([alice, bob], signer: alice, generation: 8)
        older.tombstones = [Tombstone(removed: mallory.key.id, remover: alice.key.id, generation: 7)]
        #expect(try judged(older, by: record).isTrusted)
        record.accept(try older.evidence(), path: "/v/team.vault", recordHeader: true)
        #expect(record.removed.map(\.id) == [mallory.key.id])
        #expect(record.pinned.map(\.key) == [alice.key, bob.key, carol.key], "an older copy never unpins carol")
        #expect(record.retired.isEmpty)
    }

    // MARK: - judge: unsigned, diverged, vault id

    @Test func test_judge_anUnsignedCopyAfterASignedOneIsRefused() throws {
        let record = try pinnedRecord([try TrustMember("alice")], generation: 3)
        let unsigned = MemberTrust.Copy(evidence: nil, vaultID: TrustCopy.vaultID, generation: 9)
        let judgement = MemberTrust.judge(unsigned, record: record, otherVaultAtPath: nil, comparesGenerations: false)
        #expect(judgement.findings == [.unsignedAfterSigned(firstSigned: 3)])
        #expect(!judgement.signed)
    }

    @Test func test_judge_anUnsignedVaultNeverSeenSignedHasNothingToJudge() {
        let unsigned = MemberTrust.Copy(evidence: nil, vaultID: TrustCopy.vaultID, generation: 9)
        let judgement = MemberTrust.judge(unsigned, record: nil, otherVaultAtPath: nil, comparesGenerations: true)
        #expect(judgement.isTrusted && !judgement.signed && !judgement.firstOpen)
    }

    @Test func test_judge_anUnsignedVaultWhereASignedOneWasSeenIsNotTrusted() {
        // Anyone who knows a member's age1… key can make an unsigned vault of a new id (the attack review).
        let unsigned = MemberTrust.Copy(evidence: nil, vaultID: TrustCopy.vaultID, generation: 1)
        let judgement = MemberTrust.judge(unsigned, record: nil, otherVaultAtPath: "00ff", comparesGenerations: false)
        #expect(judgement.findings == [.vaultIDChangedAtPath(previousVaultID: "00ff")])
    }

    @Test func test_judge_anAncestorThatIsAnotherHeaderHasDiverged() throws {
        let alice = try TrustMember("alice")
        let record = try pinnedRecord([alice], generation: 5)
        var fork = TrustCopy([alice], generation: 7)
        fork.ancestors = [SealAncestor(generation: 6, headerHash: randomBytes(16)), SealAncestor(generation: 5, headerHash: randomBytes(16))]
        #expect(try judged(fork, by: record).findings == [.diverged(ancestorGeneration: 5)])
        #expect(try judged(fork, by: record, comparing: false).isTrusted, "inside git, forks are git's to merge")
        var descendant = fork
        descendant.ancestors[1].headerHash = record.headers[0].headerHash
        #expect(try judged(descendant, by: record).isTrusted)
    }

    @Test func test_judge_aNewVaultIDAtAPathThatHeldAnotherIsNotPinnedSilently() throws {
        let alice = try TrustMember("alice")
        let judgement = try judged(TrustCopy([alice]), by: nil, otherVault: "0011")
        #expect(judgement.findings == [.vaultIDChangedAtPath(previousVaultID: "0011")])
        #expect(try judged(TrustCopy([alice], generation: 2), by: try pinnedRecord([alice]), otherVault: "0011").isTrusted,
                "a vault id known here is judged by its members wherever it is")
    }

    @Test func test_judge_checksAnAttestationOnlyForAKeyNotPinned() throws {
        let alice = try TrustMember("alice"), bob = try TrustMember("bob")
        let record = try pinnedRecord([alice, bob])
        var copy = TrustCopy([alice, bob], generation: 2)
        copy.slots[1].shownLabel = "robert"
        #expect(try judged(copy, by: record).isTrusted, "a pinned key is pinned whatever its label: its attestation is not checked")
    }
}
