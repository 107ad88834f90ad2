import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// A later step of the unlock sources (`Unlocker.Credentials.next`, issue 41: the command line's
/// default identities, then its prompt): asked with the header only when the sources tried so far
/// opened nothing, told what was tried, run by the store without the vault's lock, and named in
/// the library's error when it gives nothing more.
@Suite struct UnlockStepTests {
    private func makeStore(_ directory: TemporaryDirectory) throws -> VaultStore {
        let store = VaultStore(path: directory.path("v.vault"))
        try store.create(try sampleVault(), password: password("pw"), kdf: testKDF)
        return store
    }

    private func source(_ text: String) -> UnlockCredential { UnlockCredential(.password(password(text)), source: "the password") }

    /// Records each progress the step is asked with (a class: the step is an escaping closure).
    private final class Asked: @unchecked Sendable {
        var progress: [UnlockProgress] = []
    }

    // MARK: - Success

    @Test func test_next_isAskedWithTheHeaderAndWhatWasTriedThenItsSourcesOpen() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeStore(directory)
        let asked = Asked()
        let unlocker = Unlocker(credentials: [source("wrong")], limits: testLimits, next: { progress in
            asked.progress.append(progress)
            return [self.source("pw")]
        })
        #expect(try store.read(with: unlocker).vault == (try sampleVault()))
        #expect(asked.progress.count == 1)
        #expect(asked.progress.first?.step == 0 && asked.progress.first?.tried == ["the password"])
        #expect(asked.progress.first?.failure == .wrongPassword)
        #expect(asked.progress.first?.header.vaultID == (try store.readHeader().header.vaultID))
    }

    @Test func test_next_isNotAskedWhenTheSourcesGivenOpen() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeStore(directory)
        let asked = Asked()
        let unlocker = Unlocker(credentials: [source("pw")], limits: testLimits, next: { asked.progress.append($0); return nil })
        #expect(throws: Never.self) { try store.read(with: unlocker) }
        #expect(asked.progress.isEmpty)
    }

    @Test func test_edit_runsTheStepWithoutTheVaultsLock() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeStore(directory)
        let lockPath = store.lockPath
        // Nothing given (as a prompt-only command line): the step, a prompt, must not hold other writers.
        let unlocker = Unlocker(credentials: [], limits: testLimits, next: { _ in
            let other = try FileLock(path: lockPath, timeout: 0)
            other.release()
            return [self.source("pw")]
        })
        try store.edit(with: unlocker) { try $0.vault.setValue(Array("new".utf8), for: "added") }
        #expect(try store.open(password: password("pw"), limits: testLimits).vault.value(of: "added") == Array("new".utf8))
    }

    // MARK: - Failure

    @Test func test_next_givingNothingEndsWithTheLibrarysErrorNamingEverySourceTried() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeStore(directory)
        let identity = UnlockCredential(.ageIdentity(AgeIdentity.generate()), source: "the default identity /h/id.txt")
        let asked = Asked()
        let unlocker = Unlocker(credentials: [source("wrong")], limits: testLimits, next: { progress in
            asked.progress.append(progress)
            return progress.step == 0 ? [identity] : nil
        })
        #expect(throws: VaultError.noKeyslotOpens(sources: ["the password", "the default identity /h/id.txt"], unknownTypes: [])) {
            try store.read(with: unlocker)
        }
        #expect(asked.progress.map(\.step) == [0, 1])
        #expect(asked.progress.last?.failure == .noKeyslotOpens(sources: ["the password", "the default identity /h/id.txt"], unknownTypes: []))
        // Passwords alone: still a wrong password.
        let passwords = Unlocker(credentials: [source("a")], limits: testLimits, next: { $0.step == 0 ? [self.source("b")] : nil })
        #expect(throws: VaultError.wrongPassword) { try store.read(with: passwords) }
    }

    @Test func test_next_whatItThrowsEndsTheUnlock() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeStore(directory)
        struct Refusal: Error, Equatable {}
        let unlocker = Unlocker(credentials: [], limits: testLimits, next: { _ in throw Refusal() })
        #expect(throws: Refusal()) { try store.read(with: unlocker) }
    }
}
