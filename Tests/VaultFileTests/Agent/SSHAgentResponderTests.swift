import SecureMemory
import TestSupport
import Testing
@testable import VaultAgent
@testable import VaultFormat

/// The ssh-agent protocol's rules, answered by `SSHAgentResponder` over a real keyring: listing,
/// signing, the SIGN_REQUEST flags, session binding, forwarding, the vaultfile prefix, the confirm
/// command's information, and a vault locked while its confirm command runs.
@Suite struct SSHAgentResponderTests {
    /// A keyring holding one vault with `keys` served (each with `options`), and the keys' signers.
    private struct Served {
        let keyring = LockedValue(AgentKeyring())
        let vaultID = Array(repeating: UInt8(7), count: 16)
        let fileKey = SecureBytes(copying: Array(repeating: UInt8(9), count: 32))
        var signers: [DelegatedSigningKey] = []

        init(keys: Int = 1, options: SSHKeyOptions = [], confirmCommand: String = "", rsaDouble: Bool = false) throws {
            try keyring.withLock { keyring in
                try keyring.add(AgentKeyHandOver(vaultID: vaultID, fileKey: fileKey, timeoutSeconds: 0, onlyIfHeld: false, path: "/v",
                                                 confirmCommand: confirmCommand), now: 0)
            }
            var served: [SSHServedKey] = []
            var handOvers: [SSHKeyHandOver] = []
            for index in 0..<keys {
                let signer = DelegatedSigningKey()
                signers.append(signer)
                let text = signer.seed.withUnsafeBytes { OpenSSHKeyText.ed25519(seed: Array($0), publicKey: signer.publicKey, comment: "key\(index)") }
                let handOver = SSHKeyHandOver(name: "ssh/k\(index)", comment: "key\(index)", options: options, lifetimeSeconds: 0,
                                              privateKey: SecureBytes(copying: text.privateKey))
                let key: any SSHAgentKey = rsaDouble ? RSADouble(inner: try SSHAgentKeys.parse(privateKey: text.privateKey).key)
                    : try SSHAgentKeys.parse(privateKey: text.privateKey).key
                handOvers.append(handOver)
                served.append(SSHServedKey(handOver, key: key, now: 0))
            }
            let handOver = SSHKeysHandOver(vaultID: vaultID, fileKey: fileKey, replacing: true, prefix: "", keys: handOvers)
            _ = try keyring.withLock { keyring throws(AgentKeyring.Refusal) in try keyring.serveSSHKeys(handOver, keys: served, now: 0) }
        }

        func blob(_ index: Int = 0) -> [UInt8] { SSHEd25519AgentKey(signer: signers[index]).publicBlob }

        func answer(_ body: [UInt8], session: inout SSHAgentSession, confirm: (SSHConfirmRequest) -> Bool = { _ in true }) -> SSHAgentResponse {
            SSHAgentResponder.answer(body, session: &session, keyring: keyring, now: { 1 }, confirm: confirm)
        }
    }

    /// The key protocol with an ssh-rsa type (the flags' rules are the key type's), signing as ed25519.
    private struct RSADouble: SSHAgentKey {
        let inner: any SSHAgentKey
        var keyType: String { "ssh-rsa" }
        var publicBlob: [UInt8] { inner.publicBlob }
        func sign(_ data: [UInt8], flags: UInt32) -> [UInt8]? { inner.sign(data, flags: flags) }
    }

    private static func string(_ bytes: [UInt8]) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.string(bytes)
        return writer.bytes
    }

    private static func signRequest(_ blob: [UInt8], _ data: [UInt8], flags: UInt32 = 0) -> [UInt8] {
        [13] + string(blob) + string(data) + [UInt8(flags >> 24), UInt8(flags >> 16 & 0xFF), UInt8(flags >> 8 & 0xFF), UInt8(flags & 0xFF)]
    }

    /// A host key and a `session-bind@openssh.com` body for `sessionID`, signed by it (or by `forger`).
    private static func bind(_ host: DelegatedSigningKey, sessionID: [UInt8], forwarding: Bool = false, forger: DelegatedSigningKey? = nil) -> [UInt8] {
        let hostBlob = SSHEd25519AgentKey(signer: host).publicBlob
        let signature = SSHEd25519AgentKey(signer: forger ?? host).sign(sessionID, flags: 0)!
        return [27] + string(Array("session-bind@openssh.com".utf8)) + string(hostBlob) + string(sessionID) + string(signature) + [forwarding ? 1 : 0]
    }

    /// A userauth request's signed data for `sessionID`, host-bound to `hostKey` when given.
    private static func userauth(sessionID: [UInt8], key: [UInt8], hostKey: [UInt8]? = nil) -> [UInt8] {
        let method = hostKey == nil ? "publickey" : "publickey-hostbound-v00@openssh.com"
        return string(sessionID) + [50] + string(Array("git".utf8)) + string(Array("ssh-connection".utf8)) + string(Array(method.utf8)) + [1]
            + string(Array("ssh-ed25519".utf8)) + string(key) + (hostKey.map(string) ?? [])
    }

    private static func verifies(_ response: SSHAgentResponse, data: [UInt8], signer: DelegatedSigningKey) -> Bool {
        guard case .signature(let blob) = response else { return false }
        var reader = SSHWireReader(blob[...])
        guard reader.string()?.elementsEqual("ssh-ed25519".utf8) == true, let raw = reader.string(), reader.isAtEnd else { return false }
        return SealVerification.ed25519Verifies(signature: Array(raw), message: data, publicKey: signer.publicKey)
    }

    // MARK: - Listing and signing

    @Test func test_answer_listsEveryServedKeyWithItsComment() throws {
        let served = try Served(keys: 2)
        var session = SSHAgentSession()
        let answer = served.answer([11], session: &session)
        #expect(answer == .identities([SSHAgentIdentity(publicBlob: served.blob(0), comment: "key0"),
                                       SSHAgentIdentity(publicBlob: served.blob(1), comment: "key1")]))
        #expect(answer.frame.prefix(5) == [0, 0, 0, UInt8(answer.frame.count - 4), 12])
    }

    @Test func test_answer_signsWithEd25519AndTheSignatureVerifies() throws {
        let served = try Served()
        var session = SSHAgentSession()
        let data = Array("some data".utf8)
        #expect(Self.verifies(served.answer(Self.signRequest(served.blob(), data), session: &session), data: data, signer: served.signers[0]))
    }

    @Test func test_answer_refusesAKeyNotServedUnknownFlagsAndBothRSAFlags() throws {
        let served = try Served()
        var session = SSHAgentSession()
        let other = SSHEd25519AgentKey(signer: DelegatedSigningKey()).publicBlob
        #expect(served.answer(Self.signRequest(other, [1]), session: &session) == .failure)
        #expect(served.answer(Self.signRequest(served.blob(), [1], flags: 1), session: &session) == .failure)
        #expect(served.answer(Self.signRequest(served.blob(), [1], flags: 8), session: &session) == .failure)
        #expect(served.answer(Self.signRequest(served.blob(), [1], flags: 6), session: &session) == .failure)
    }

    @Test func test_answer_refusesSHA1ForRSAUnlessAllowed() throws {
        var session = SSHAgentSession()
        let strict = try Served(rsaDouble: true)
        #expect(strict.answer(Self.signRequest(strict.blob(), [1]), session: &session) == .failure)
        #expect(strict.answer(Self.signRequest(strict.blob(), [1], flags: 2), session: &session) != .failure)
        #expect(strict.answer(Self.signRequest(strict.blob(), [1], flags: 4), session: &session) != .failure)
        let loose = try Served(options: .allowSHA1, rsaDouble: true)
        #expect(loose.answer(Self.signRequest(loose.blob(), [1]), session: &session) != .failure)
    }

    @Test func test_answer_neverSignsDataWithAVaultfilePrefix() throws {
        let served = try Served()
        var session = SSHAgentSession()
        for prefix in [SealTranscript.sealPrefix, SealTranscript.delegationPrefix, SealTranscript.attestationPrefix, Array("vaultfile later v9".utf8)] {
            #expect(served.answer(Self.signRequest(served.blob(), prefix + [1, 2, 3]), session: &session) == .failure)
        }
    }

    // MARK: - Everything else

    @Test func test_answer_failsEveryRequestItDoesNotServe() throws {
        let served = try Served()
        var session = SSHAgentSession()
        // add identity, remove identity, remove all, lock, unlock, add smartcard, add constrained, an unknown type
        for type: UInt8 in [17, 18, 19, 22, 23, 20, 25, 0, 255] { #expect(served.answer([type], session: &session) == .failure) }
        #expect(served.answer([27] + Self.string(Array("query".utf8)), session: &session) == .failure)
        #expect(served.answer([27] + Self.string(Array("other@example.com".utf8)) + [1, 2], session: &session) == .failure)
    }

    @Test func test_answer_failsMalformedFramesOfEveryShape() throws {
        let served = try Served()
        var session = SSHAgentSession()
        let good = Self.signRequest(served.blob(), [1, 2])
        for cut in 0..<good.count { #expect(served.answer(Array(good.prefix(cut)), session: &session) == .failure, "cut at \(cut)") }
        #expect(served.answer(good + [0], session: &session) == .failure)
        #expect(served.answer([11, 0], session: &session) == .failure)
        #expect(served.answer([13, 0xFF, 0xFF, 0xFF, 0xFF], session: &session) == .failure)
        // The connection still works after all of them.
        #expect(Self.verifies(served.answer(good, session: &session), data: [1, 2], signer: served.signers[0]))
    }

    // MARK: - session-bind@openssh.com

    @Test func test_sessionBind_acceptsAVerifiedBindAndUserauthMustCarryItsSessionID() throws {
        let served = try Served()
        var session = SSHAgentSession()
        let host = DelegatedSigningKey(), sid = Array(repeating: UInt8(0x42), count: 32)
        #expect(served.answer(Self.bind(host, sessionID: sid), session: &session) == .success)
        let hostBlob = SSHEd25519AgentKey(signer: host).publicBlob
        let right = Self.userauth(sessionID: sid, key: served.blob(), hostKey: hostBlob)
        #expect(Self.verifies(served.answer(Self.signRequest(served.blob(), right), session: &session), data: right, signer: served.signers[0]))
        let plain = Self.userauth(sessionID: sid, key: served.blob())
        #expect(Self.verifies(served.answer(Self.signRequest(served.blob(), plain), session: &session), data: plain, signer: served.signers[0]))
        let otherSession = Self.userauth(sessionID: Array(repeating: 1, count: 32), key: served.blob())
        #expect(served.answer(Self.signRequest(served.blob(), otherSession), session: &session) == .failure)
        let otherHost = Self.userauth(sessionID: sid, key: served.blob(), hostKey: SSHEd25519AgentKey(signer: DelegatedSigningKey()).publicBlob)
        #expect(served.answer(Self.signRequest(served.blob(), otherHost), session: &session) == .failure)
    }

    @Test func test_sessionBind_aBadSignatureFailsAndTheConnectionSignsNothingAfter() throws {
        let served = try Served()
        var session = SSHAgentSession()
        let forged = Self.bind(DelegatedSigningKey(), sessionID: [1, 2, 3], forger: DelegatedSigningKey())
        #expect(served.answer(forged, session: &session) == .extensionFailure)
        #expect(served.answer(Self.signRequest(served.blob(), [1]), session: &session) == .failure)
    }

    @Test func test_sessionBind_keepsAtMost16AndRefusesASessionIDUnderAnotherHostKey() throws {
        let served = try Served()
        var session = SSHAgentSession()
        let host = DelegatedSigningKey()
        for index in 0..<16 { #expect(served.answer(Self.bind(host, sessionID: [UInt8(index), 1]), session: &session) == .success) }
        #expect(served.answer(Self.bind(host, sessionID: [0, 1]), session: &session) == .success, "the same binding again")
        #expect(served.answer(Self.bind(host, sessionID: [99, 1]), session: &session) == .extensionFailure)
        var second = SSHAgentSession()
        #expect(served.answer(Self.bind(host, sessionID: [5]), session: &second) == .success)
        #expect(served.answer(Self.bind(DelegatedSigningKey(), sessionID: [5]), session: &second) == .extensionFailure)
        #expect(second.bindFailed)
    }

    @Test func test_sessionBind_aForwardedConnectionSignsOnlyWithKeysThatAllowIt() throws {
        let strict = try Served()
        var session = SSHAgentSession()
        #expect(strict.answer(Self.bind(DelegatedSigningKey(), sessionID: [1], forwarding: true), session: &session) == .success)
        #expect(strict.answer(Self.signRequest(strict.blob(), [1]), session: &session) == .failure)
        let loose = try Served(options: .allowForwarding)
        var forwarded = SSHAgentSession()
        #expect(loose.answer(Self.bind(DelegatedSigningKey(), sessionID: [1], forwarding: true), session: &forwarded) == .success)
        #expect(Self.verifies(loose.answer(Self.signRequest(loose.blob(), [1]), session: &forwarded), data: [1], signer: loose.signers[0]))
    }

    // MARK: - The confirm command

    @Test func test_confirm_isToldTheFingerprintPurposeDestinationAndForwarding() throws {
        let served = try Served(options: .confirm, confirmCommand: "true")
        var session = SSHAgentSession()
        let host = DelegatedSigningKey(), sid: [UInt8] = [7, 7]
        #expect(served.answer(Self.bind(host, sessionID: sid), session: &session) == .success)
        var seen: [SSHConfirmRequest] = []
        let auth = Self.userauth(sessionID: sid, key: served.blob())
        _ = served.answer(Self.signRequest(served.blob(), auth), session: &session) { seen.append($0); return true }
        let sshsig = Array("SSHSIG".utf8) + Self.string(Array("git".utf8)) + Self.string([]) + Self.string(Array("sha512".utf8)) + Self.string([1])
        _ = served.answer(Self.signRequest(served.blob(), sshsig), session: &session) { seen.append($0); return true }
        #expect(served.answer(Self.signRequest(served.blob(), [9]), session: &session) { seen.append($0); return false } == .failure)
        #expect(seen.map(\.purpose) == ["userauth", "sshsig", "other"])
        #expect(seen[0].hostKeyFingerprint == SSHFingerprint.sha256(SSHEd25519AgentKey(signer: host).publicBlob) && seen[0].user == "git")
        #expect(seen[1].namespace == "git" && seen[1].hostKeyFingerprint == nil)
        #expect(seen.allSatisfy { $0.fingerprint == SSHFingerprint.sha256(served.blob()) && $0.command == "true" && !$0.forwarded && $0.path == "/v" })
    }

    @Test func test_confirm_aVaultLockedWhileItRunsSignsNothing() throws {
        let served = try Served(options: .confirm, confirmCommand: "true")
        var session = SSHAgentSession()
        let answer = served.answer(Self.signRequest(served.blob(), [1]), session: &session) { _ in
            served.keyring.withLock { $0.forget(vaultID: served.vaultID) }
            return true
        }
        #expect(answer == .failure)
        #expect(served.answer([11], session: &session) == .identities([]))
    }

    // MARK: - The keyring

    @Test func test_serveSSHKeys_refusesWithoutAHeldKeyAndForAVaultNotHeld() throws {
        let served = try Served()
        let wrong = SSHKeysHandOver(vaultID: served.vaultID, fileKey: SecureBytes(copying: Array(repeating: 1, count: 32)), replacing: true, prefix: "", keys: [])
        #expect(throws: AgentKeyring.Refusal.unproven) { try served.keyring.withLock { keyring throws(AgentKeyring.Refusal) in try keyring.serveSSHKeys(wrong, keys: [], now: 1) } }
        let absent = SSHKeysHandOver(vaultID: Array(repeating: 1, count: 16), fileKey: served.fileKey, replacing: true, prefix: "", keys: [])
        #expect(try served.keyring.withLock { keyring throws(AgentKeyring.Refusal) in try keyring.serveSSHKeys(absent, keys: [], now: 1) } == .notHeld)
        #expect(served.keyring.withLock { $0.sshKeyCount } == 1)
    }

    @Test func test_serveSSHKeys_aLifetimeEndsServingAndReplacingDropsThePrefix() throws {
        let served = try Served(keys: 2)
        let signer = DelegatedSigningKey()
        let text = signer.seed.withUnsafeBytes { OpenSSHKeyText.ed25519(seed: Array($0), publicKey: signer.publicKey, comment: "brief") }
        let handOver = SSHKeyHandOver(name: "ssh/k0", comment: "brief", options: [], lifetimeSeconds: 10, privateKey: SecureBytes(copying: text.privateKey))
        let request = SSHKeysHandOver(vaultID: served.vaultID, fileKey: served.fileKey, replacing: true, prefix: "ssh/k0", keys: [handOver])
        let key = SSHServedKey(handOver, key: try SSHAgentKeys.parse(privateKey: text.privateKey).key, now: 5)
        _ = try served.keyring.withLock { keyring throws(AgentKeyring.Refusal) in try keyring.serveSSHKeys(request, keys: [key], now: 5) }
        #expect(served.keyring.withLock { $0.sshIdentities(now: 6).map(\.comment) } == ["brief", "key1"])
        #expect(served.keyring.withLock { $0.nextExpiry } == 15)
        served.keyring.withLock { $0.expire(now: 15) }
        #expect(served.keyring.withLock { $0.sshIdentities(now: 15).map(\.comment) } == ["key1"])
    }
}
