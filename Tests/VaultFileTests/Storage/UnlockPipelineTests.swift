import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// The one way in (`Unlocker`, `VaultStore.read`/`edit`/`replaceKeys`): the order in which the
/// sources are tried, one header read per command whichever source opens (a second only when the
/// file changed while the unlock sources were read), and no lock held while they are read.
@Suite struct UnlockPipelineTests {
    /// What the pipeline did, in order: its steps, the lookups and the credentials asked for.
    private final class Trace: @unchecked Sendable {
        private let lock = NSLock()
        private var events: [String] = []
        func note(_ event: String) { lock.withLock { events.append(event) } }
        var all: [String] { lock.withLock { events } }
    }

    private func makeStore(_ directory: TemporaryDirectory, trace: Trace) throws -> VaultStore {
        var store = VaultStore(path: directory.path("v.vault"))
        try store.create(try sampleVault(), password: password("pw"), kdf: testKDF)
        store.onStep = { step in trace.note("\(step)") }
        return store
    }

    // MARK: - edit

    @Test func test_edit_afterALookupWithNoKeyReadsTheCredentialsWithoutTheLockAndTheHeaderOnce() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trace = Trace()
        let store = try makeStore(directory, trace: trace)
        let lockPath = store.lockPath
        // As the CLI with an agent socket whose agent holds no key: the lookup misses under the
        // lock, then the password is read (a prompt may take minutes) with the lock released, so
        // that other writers do not wait on it; the lock is taken again and the file, unchanged,
        // is not read twice.
        let unlocker = Unlocker(lookup: { _ in trace.note("lookup"); return nil }, credentials: {
            trace.note("credentials")
            let other = try FileLock(path: lockPath, timeout: 0)
            other.release()
            return Unlocker.Credentials([UnlockCredential(.password(password("pw")), source: "the password")], limits: testLimits)
        })
        try store.edit(with: unlocker) { try $0.vault.setValue(Array("new".utf8), for: "added") }
        #expect(trace.all == ["locked", "readHeader", "lookup", "credentials", "locked"])
        #expect(try store.open(password: password("pw"), limits: testLimits).vault.value(of: "added") == Array("new".utf8))
    }

    @Test func test_edit_readsAgainAFileAnotherWriterReplacedWhileTheCredentialsWereRead() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trace = Trace()
        let store = try makeStore(directory, trace: trace)
        let unlocker = Unlocker(lookup: { _ in nil }, credentials: {
            // Another writer, while the password is typed: its change must not be lost.
            try VaultStore(path: store.path).update(password: password("pw"), limits: testLimits) {
                try $0.vault.setValue(Array("theirs".utf8), for: "other")
            }
            return Unlocker.Credentials([UnlockCredential(.password(password("pw")), source: "the password")], limits: testLimits)
        })
        try store.edit(with: unlocker) { try $0.vault.setValue(Array("ours".utf8), for: "added") }
        #expect(trace.all == ["locked", "readHeader", "locked", "readHeader"])
        let vault = try store.open(password: password("pw"), limits: testLimits).vault
        #expect(try vault.value(of: "other") == Array("theirs".utf8))
        #expect(try vault.value(of: "added") == Array("ours".utf8))
    }

    @Test func test_replaceKeys_locksAndReadsTheHeaderOnce() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trace = Trace()
        let store = try makeStore(directory, trace: trace)
        try store.changePassword(from: password("pw"), to: password("new"), kdf: nil, limits: testLimits)
        #expect(trace.all == ["locked", "readHeader"])
        #expect(throws: VaultError.wrongPassword) { try store.open(password: password("pw"), limits: testLimits) }
    }

    // MARK: - read

    @Test func test_read_takesNoLockAndReadsTheHeaderOnce() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trace = Trace()
        let store = try makeStore(directory, trace: trace)
        let unlocker = Unlocker(lookup: { _ in trace.note("lookup"); return nil }, credentials: {
            trace.note("credentials")
            return Unlocker.Credentials([UnlockCredential(.password(password("pw")), source: "the password")], limits: testLimits)
        })
        #expect(try store.read(with: unlocker).vault == (try sampleVault()))
        #expect(trace.all == ["readHeader", "lookup", "credentials"])
    }

    @Test func test_read_opensTheVaultAsItIsOnceTheCredentialsAreRead() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trace = Trace()
        let store = try makeStore(directory, trace: trace)
        let unlocker = Unlocker(lookup: { _ in nil }, credentials: {
            try VaultStore(path: store.path).update(password: password("pw"), limits: testLimits) {
                try $0.vault.setValue(Array("newer".utf8), for: "written meanwhile")
            }
            return Unlocker.Credentials([UnlockCredential(.password(password("pw")), source: "the password")], limits: testLimits)
        })
        #expect(try store.read(with: unlocker).vault.value(of: "written meanwhile") == Array("newer".utf8))
        #expect(trace.all == ["readHeader", "readHeader"])
    }

    @Test func test_unlockFileKey_refusesAPasswordAPasswdRetiredWhileItWasRead() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trace = Trace()
        let store = try makeStore(directory, trace: trace)
        let unlocker = Unlocker(lookup: { _ in nil }, credentials: {
            try VaultStore(path: store.path).changePassword(from: password("pw"), to: password("new"), kdf: nil, limits: testLimits)
            return Unlocker.Credentials([UnlockCredential(.password(password("pw")), source: "the password")], limits: testLimits)
        })
        #expect(throws: VaultError.wrongPassword) { try store.unlockFileKey(with: unlocker) }
    }

    // MARK: - The order of the sources

    @Test func test_unlocker_triesAKnownFileKeyBeforeTheLookupAndTheCredentials() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trace = Trace()
        let store = try makeStore(directory, trace: trace)
        // Through a store that is not traced: only the read below counts.
        let key = try VaultStore(path: store.path).unlockFileKey(password: password("pw"), limits: testLimits).fileKey
        let unlocker = Unlocker(fileKey: key, lookup: { _ in trace.note("lookup"); return nil }, credentials: {
            trace.note("credentials")
            return Unlocker.Credentials([], limits: testLimits, willDeriveKey: { _ in trace.note("kdf") })
        })
        let unlocked = try store.read(with: unlocker)
        #expect(unlocked.vault == (try sampleVault()))
        #expect(unlocked.openedSlot == nil, "no slot opened: the key was known")
        #expect(trace.all == ["readHeader"], "neither the lookup nor the lazy credentials were asked, and no KDF ran")
    }

    @Test func test_unlocker_asksTheCredentialsOnlyWhenNoKeyVerifies() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trace = Trace()
        let store = try makeStore(directory, trace: trace)
        let wrong = SecureBytes(copying: randomBytes(count: 32))
        let unlocker = Unlocker(fileKey: wrong, lookup: { _ in trace.note("lookup"); return wrong }, credentials: {
            trace.note("credentials")
            return Unlocker.Credentials([UnlockCredential(.password(password("pw")), source: "the password")], limits: testLimits)
        })
        let unlocked = try store.read(with: unlocker)
        #expect(unlocked.openedSlot?.index == 0)
        #expect(trace.all == ["readHeader", "lookup", "credentials"])
    }

    @Test func test_unlocker_withoutCredentialsRefusesAKeyThatDoesNotVerify() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trace = Trace()
        let store = try makeStore(directory, trace: trace)
        let wrong = SecureBytes(copying: randomBytes(count: 32))
        #expect(throws: VaultError.fileKeyRejected) { try store.read(with: Unlocker(lookup: { _ in wrong })) }
        #expect(throws: VaultError.fileKeyRejected) { try store.edit(with: Unlocker(fileKey: wrong)) { _ in } }
        #expect(throws: VaultError.fileKeyRejected) { try store.unlockFileKey(with: Unlocker()) }
    }

    @Test func test_unlockFileKey_readsOnlyTheHeaderAndNamesTheSlotThatOpened() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trace = Trace()
        let store = try makeStore(directory, trace: trace)
        let byPassword = try store.unlockFileKey(with: Unlocker(credentials: [UnlockCredential(.password(password("pw")), source: "p")],
                                                                limits: testLimits))
        #expect(byPassword.opened?.index == 0)
        let byKey = try store.unlockFileKey(with: Unlocker(lookup: { _ in byPassword.fileKey }))
        #expect(byKey.opened == nil && byKey.fileKey.constantTimeEquals(byPassword.fileKey))
        #expect(trace.all == ["readHeader", "readHeader"])
    }
}
