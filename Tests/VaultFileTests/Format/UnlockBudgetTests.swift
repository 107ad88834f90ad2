import KDF
import SecureMemory
import Testing
@testable import VaultFormat
@testable import VaultModel

/// The KDF caps bound the total over the keyslots one unlock tries, not each slot alone.
@Suite struct UnlockBudgetTests {
    /// Argon2id at 8 KiB and `passes` passes: `8 × passes` KiB of work, milliseconds to run.
    private func argon2(passes: UInt32) -> KDFParameters { .argon2id(.init(memoryKiB: 8, iterations: passes, parallelism: 1)) }

    private func limits(work: UInt64 = .max, iterations: UInt64 = .max) -> KDFLimits {
        KDFLimits(maxMemoryBytes: 1 << 20, maxArgon2WorkKiB: work, maxPBKDF2Iterations: iterations)
    }

    /// A sealed vault whose keyslots, in file order, each wrap the file key under one password and KDF setting.
    private func vault(slots: [(password: String, kdf: KDFParameters)], extra: [Keyslot] = []) throws -> [UInt8] {
        let fileKey = SecureBytes(copying: randomBytes(count: 32))
        let vaultID = randomBytes(count: 16)
        let keyslots = try slots.map { slot in
            Keyslot.password(try VaultCodec.makePasswordSlot(password: password(slot.password), kdf: slot.kdf, fileKey: fileKey, vaultID: vaultID))
        }
        let header = VaultHeader(vaultID: vaultID, generation: 0, streamHeader: [UInt8](repeating: 0, count: 24), keyslots: keyslots + extra)
        return try UnlockedVault(vault: try sampleVault(), header: header, fileKey: fileKey).seal()
    }

    /// Opens `bytes` with `pass` and `limits`; returns the outcome and the settings of every KDF that ran.
    private func open(_ bytes: [UInt8], pass: String = "pw", limits: KDFLimits) -> (result: Result<UnlockedVault, any Error>, derived: [KDFParameters]) {
        var derived: [KDFParameters] = []
        let result = Result { try VaultCodec.open(bytes, path: "t.vault", password: password(pass), limits: limits) { derived.append($0) } }
        return (result, derived)
    }

    // MARK: - open: success

    @Test func test_open_opensWhenTheSumOfTheSlotsTriedIsWithinTheCap() throws {
        let bytes = try vault(slots: [("a", argon2(passes: 2)), ("b", argon2(passes: 2)), ("c", argon2(passes: 2)), ("pw", argon2(passes: 2))])
        let (result, derived) = open(bytes, limits: limits(work: 64))
        #expect(try result.get().vault == (try sampleVault()))
        #expect(derived.count == 4)
    }

    @Test func test_open_aCheaperSlotAfterOneOverTheBudgetStillRuns() throws {
        // 16 KiB of work, then 32 (16 + 32 > 24: skipped), then 8 (16 + 8 = 24: tried, opens).
        let bytes = try vault(slots: [("a", argon2(passes: 2)), ("b", argon2(passes: 4)), ("pw", argon2(passes: 1))])
        let (result, derived) = open(bytes, limits: limits(work: 24))
        #expect(throws: Never.self) { try result.get() }
        #expect(derived == [argon2(passes: 2), argon2(passes: 1)])
    }

    @Test func test_open_argon2idWorkAndPBKDF2IterationsAreSeparateTotals() throws {
        let pbkdf2 = KDFParameters.pbkdf2SHA256(.init(iterations: 1_000))
        let bytes = try vault(slots: [("a", argon2(passes: 2)), ("pw", pbkdf2)])
        let (result, derived) = open(bytes, limits: limits(work: 16, iterations: 1_000))
        #expect(throws: Never.self) { try result.get() }
        #expect(derived.count == 2)
    }

    // MARK: - open: failure

    /// The finding: sixteen slots at the caps made one unlock cost sixteen times them. Three slots
    /// within the total are tried; the fourth, which opens, would pass it and is skipped.
    @Test func test_open_slotsEachUnderTheCapButOverItInTotalAreOverLimit() throws {
        let bytes = try vault(slots: [("a", argon2(passes: 2)), ("b", argon2(passes: 2)), ("c", argon2(passes: 2)), ("pw", argon2(passes: 2))])
        let (result, derived) = open(bytes, limits: limits(work: 48))
        #expect(throws: KDFError.workTotalOverCap(spent: 48, asked: 16, cap: 48)) { try result.get() }
        #expect(derived.count == 3, "only the slots within the total ran")
        let error = KDFError.workTotalOverCap(spent: 48, asked: 16, cap: 48)
        #expect(error.description == "the vault's keyslots ask for 64 KiB of Argon2id work (memory × iterations) to unlock, "
            + "in total over the slots tried (48 KiB before the next slot, 16 KiB for it); the limit on the total is 48 KiB")
        #expect(error.category == .overLimit)
    }

    @Test func test_open_pbkdf2IterationsOverTheTotalAreOverLimit() throws {
        let pbkdf2 = KDFParameters.pbkdf2SHA256(.init(iterations: 1_000))
        let bytes = try vault(slots: [("a", pbkdf2), ("b", pbkdf2), ("pw", pbkdf2)])
        let (result, derived) = open(bytes, limits: limits(iterations: 2_500))
        #expect(throws: KDFError.iterationsTotalOverCap(spent: 2_000, asked: 1_000, cap: 2_500)) { try result.get() }
        #expect(derived.count == 2)
    }

    /// As documented (docs/FORMAT.md §3.2): no slot opens and none was skipped → wrong password;
    /// no slot opens and one was skipped → over a limit, the first cap passed.
    @Test func test_open_wrongPasswordWithinTheTotalIsStillAWrongPassword() throws {
        let bytes = try vault(slots: [("a", argon2(passes: 2)), ("b", argon2(passes: 2))])
        #expect(throws: VaultError.wrongPassword) { try open(bytes, pass: "nope", limits: limits(work: 32)).result.get() }
        #expect(throws: KDFError.workTotalOverCap(spent: 16, asked: 16, cap: 24)) {
            try open(bytes, pass: "nope", limits: limits(work: 24)).result.get()
        }
    }

    @Test func test_open_aSlotAloneOverTheCapKeepsItsOwnError() throws {
        let bytes = try vault(slots: [("pw", argon2(passes: 4))])
        #expect(throws: KDFError.workOverCap(asked: 32, cap: 16)) { try open(bytes, limits: limits(work: 16)).result.get() }
    }

    /// docs/FORMAT.md §3.2: one budget per unlock of a file, over every source given. A recovery
    /// code's slots are tried before the password's and count against the same totals; identity
    /// and keyfile slots run no KDF and count nothing.
    @Test func test_open_everySourceOfOneUnlockSharesOneBudget() throws {
        let code = RecoveryCode.generate(), other = RecoveryCode.generate(), alice = AgeIdentity.generate()
        let bytes = try VaultCodec.create(try sampleVault(), slots: [(.recipient(alice.recipient), ""), (.recovery(code, argon2(passes: 2)), ""),
                                                                     (.password(password("pw"), argon2(passes: 2)), "")], now: 0).seal()
        let sources = [UnlockCredential(.ageIdentity(AgeIdentity.generate()), source: "--identity other"),
                       UnlockCredential(.recovery(other), source: "the recovery code"), .password(password("pw"))]
        func open(work: UInt64) -> (Result<UnlockedVault, any Error>, [KDFParameters]) {
            var derived: [KDFParameters] = []
            let result = Result { try VaultCodec.open(bytes, path: "t", credentials: sources, limits: limits(work: work)) { derived.append($0) } }
            return (result, derived)
        }
        // 16 KiB for the (wrong) recovery code, then 16 for the password: 32 in all.
        let (opened, ran) = open(work: 32)
        #expect(throws: Never.self) { try opened.get() }
        #expect(ran == [argon2(passes: 2), argon2(passes: 2)])
        let (refused, tried) = open(work: 24)
        #expect(throws: KDFError.workTotalOverCap(spent: 16, asked: 16, cap: 24)) { try refused.get() }
        #expect(tried == [argon2(passes: 2)], "the password's slot would pass the total the recovery code began")
    }

    /// docs/FORMAT.md §9, step 10: when every source fails, the error is chosen in this order: a
    /// cap passed (over a limit), else wrong password when only passwords were tried and every
    /// slot is of a known type, else no keyslot opens, naming every source tried and the unknown types.
    @Test func test_open_whenEverySourceFailsTheErrorIsChosenInTheDocumentedOrder() throws {
        let alice = AgeIdentity.generate(), stranger = UnlockCredential(.ageIdentity(AgeIdentity.generate()), source: "--identity x")
        let wrong = UnlockCredential.password(password("nope"))
        let plain = try vault(slots: [("pw", argon2(passes: 2))])
        let unknown = try vault(slots: [("pw", argon2(passes: 2))], extra: [.unknown(type: 9, body: [1])])
        let team = try VaultCodec.create(try sampleVault(), slots: [(.recipient(alice.recipient), ""), (.password(password("pw"), argon2(passes: 2)), "")],
                                         now: 0).seal()
        func error(_ bytes: [UInt8], _ sources: [UnlockCredential], work: UInt64 = .max) -> (any Error)? {
            do { _ = try VaultCodec.open(bytes, path: "t", credentials: sources, limits: limits(work: work)); return nil } catch { return error }
        }
        #expect(error(plain, [wrong]) as? VaultError == .wrongPassword)
        #expect(error(unknown, [wrong]) as? VaultError == .noKeyslotOpens(sources: ["the password"], unknownTypes: [9]))
        #expect(error(team, [stranger, wrong]) as? VaultError == .noKeyslotOpens(sources: ["--identity x", "the password"], unknownTypes: []))
        #expect(error(team, [stranger, wrong], work: 8) as? KDFError == .workOverCap(asked: 16, cap: 8), "a cap passed wins")
        let unknownOnly = try UnlockedVault(vault: try sampleVault(), header: VaultHeader(vaultID: randomBytes(count: 16), generation: 0,
            streamHeader: [UInt8](repeating: 0, count: 24), keyslots: [.unknown(type: 9, body: [1])]), fileKey: SecureBytes(copying: randomBytes(count: 32))).seal()
        #expect(error(unknownOnly, [wrong]) as? VaultError == .unsupportedFeature("keyslots of type 9 and no password slot"), "checked before any source")
    }

    // MARK: - passwordOrder

    @Test func test_passwordOrder_keepsPasswordSlotsInFileOrderAndLeavesOutUnknownKinds() throws {
        let slot = { (kdf: KDFParameters) in
            Keyslot.password(PasswordSlot(kdf: kdf, salt: [UInt8](repeating: 0, count: 16), nonce: [UInt8](repeating: 0, count: 24), wrappedKey: []))
        }
        let unknown = Keyslot.unknown(type: 9, body: [1, 2, 3])
        let slots = [unknown, slot(argon2(passes: 3)), unknown, slot(argon2(passes: 1)), slot(argon2(passes: 2))]
        #expect(VaultCodec.passwordOrder(slots) == [slot(argon2(passes: 3)), slot(argon2(passes: 1)), slot(argon2(passes: 2))])
    }

    // MARK: - KDFBudget

    @Test func test_spend_countsNothingForARefusedSlot() throws {
        var budget = KDFBudget(limits(work: 24))
        try budget.spend(on: argon2(passes: 2))
        #expect(throws: KDFError.workTotalOverCap(spent: 16, asked: 16, cap: 24)) { try budget.spend(on: argon2(passes: 2)) }
        #expect(budget.argon2WorkKiB == 16)
        try budget.spend(on: argon2(passes: 1))
        #expect(budget.argon2WorkKiB == 24)
    }

    @Test func test_spend_memoryStaysACapPerSlot() throws {
        var budget = KDFBudget(KDFLimits(maxMemoryBytes: 8 << 10, maxArgon2WorkKiB: .max, maxPBKDF2Iterations: .max))
        for _ in 0..<16 { try budget.spend(on: argon2(passes: 1)) }
        #expect(throws: KDFError.memoryOverCap(asked: 16 << 10, cap: 8 << 10)) {
            try budget.spend(on: .argon2id(.init(memoryKiB: 16, iterations: 1, parallelism: 1)))
        }
    }
}
