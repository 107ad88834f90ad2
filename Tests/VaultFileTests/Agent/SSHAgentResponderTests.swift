import SecureMemory
import TestSupport
import Testing
@testable import VaultAgent
@testable import VaultFormat

/// The ssh-agent protocol's rules, answered by `SSHAgentResponder` over a real keyring: listing,
/// signing, the SIGN_REQUEST flags, session binding, forwarding, the vaultfile prefix, the confirm
/// command's information, and a vault locked while its confirm command runs.
@Suite struct SSHAgentResponderTests {
    /// A keyring holding one vault with `keys` keys of `type` served (each with `options`).
    private struct Served {
        let keyring = LockedValue(AgentKeyring())
        let vaultID = Array(repeating: UInt8(7), count: 16)
        let fileKey = SecureBytes(copying: Array(repeating: UInt8(9), count: 32))
        var keys: [SSHPrivateKey] = []

        init(keys count: Int = 1, type: SSHKeyType = .ed25519, options: SSHKeyOptions = [], confirmCommand: String = "") throws {
            _ = try keyring.withLock { keyring in
                try keyring.add(AgentKeyHandOver(vaultID: vaultID, fileKey: fileKey, timeoutSeconds: 0, onlyIfHeld: false, path: "/v",
                                                 confirmCommand: confirmCommand), now: 0)
            }
            var served: [SSHServedKey] = []
            var handOvers: [SSHKeyHandOver] = []
            for index in 0..<count {
                let key = try SSHPrivateKey.generate(type, rsaBits: 2048, comment: "key\(index)")
                keys.append(key)
                let handOver = SSHKeyHandOver(name: "ssh/k\(index)", comment: "key\(index)", options: options, lifetimeSeconds: 0,
                                              privateKey: try key.openSSHText())
                handOvers.append(handOver)
                served.append(SSHServedKey(handOver, key: try SSHPrivateKey.parse(handOver.privateKey, source: "test"), now: 0))
            }
            let handOver = SSHKeysHandOver(vaultID: vaultID, fileKey: fileKey, replacing: true, prefix: "", keys: handOvers)
            _ = try keyring.withLock { keyring throws(AgentKeyring.Refusal) in try keyring.serveSSHKeys(handOver, keys: served, now: 0) }
        }

        func blob(_ index: Int = 0) -> [UInt8] { keys[index].publicKey.wireBytes }

        func answer(_ body: [UInt8], session: inout SSHAgentSession, confirm: (SSHConfirmRequest) -> Bool = { _ in true }) -> SSHAgentResponse {
            SSHAgentResponder.answer(body, session: &session, keyring: keyring, now: { 1 }, confirm: confirm)
        }
    }

    private static func host() throws -> SSHPrivateKey { try SSHPrivateKey.generate(.ed25519, comment: "host") }

    private static func string(_ bytes: [UInt8]) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.string(bytes)
        return writer.bytes
    }

    private static func signRequest(_ blob: [UInt8], _ data: [UInt8], flags: UInt32 = 0) -> [UInt8] {
        [13] + string(blob) + string(data) + [UInt8(flags >> 24), UInt8(flags >> 16 & 0xFF), UInt8(flags >> 8 & 0xFF), UInt8(flags & 0xFF)]
    }

    /// A `session-bind@openssh.com` body for `sessionID`, signed by `host` (or by `forger`).
    private static func bind(_ host: SSHPrivateKey, sessionID: [UInt8], forwarding: Bool = false, forger: SSHPrivateKey? = nil) throws -> [UInt8] {
        let signature = try (forger ?? host).sign(sessionID, flags: 4)  // rsa-sha2-512 for an RSA host key, as sshd signs
        return [27] + string(Array("session-bind@openssh.com".utf8)) + string(host.publicKey.wireBytes) + string(sessionID) + string(signature)
            + [forwarding ? 1 : 0]
    }

    /// A userauth request's signed data for `sessionID`, host-bound to `hostKey` when given.
    private static func userauth(sessionID: [UInt8], key: [UInt8], hostKey: [UInt8]? = nil) -> [UInt8] {
        let method = hostKey == nil ? "publickey" : "publickey-hostbound-v00@openssh.com"
        return string(sessionID) + [50] + string(Array("git".utf8)) + string(Array("ssh-connection".utf8)) + string(Array(method.utf8)) + [1]
            + string(Array("ssh-ed25519".utf8)) + string(key) + (hostKey.map(string) ?? [])
    }

    private static func verifies(_ response: SSHAgentResponse, data: [UInt8], key: SSHPrivateKey) -> Bool {
        guard case .signature(let blob) = response else { return false }
        return key.publicKey.verifies(signature: blob, of: data)
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
        #expect(Self.verifies(served.answer(Self.signRequest(served.blob(), data), session: &session), data: data, key: served.keys[0]))
    }

    @Test func test_answer_refusesAKeyNotServedUnknownFlagsAndBothRSAFlags() throws {
        let served = try Served()
        var session = SSHAgentSession()
        let other = try Self.host().publicKey.wireBytes
        #expect(served.answer(Self.signRequest(other, [1]), session: &session) == .failure)
        #expect(served.answer(Self.signRequest(served.blob(), [1], flags: 1), session: &session) == .failure)
        #expect(served.answer(Self.signRequest(served.blob(), [1], flags: 8), session: &session) == .failure)
        #expect(served.answer(Self.signRequest(served.blob(), [1], flags: 6), session: &session) == .failure)
    }

    @Test func test_answer_signsRSAWithSHA2AndRefusesSHA1UnlessAllowed() throws {
        var session = SSHAgentSession()
        let strict = try Served(type: .rsa)
        #expect(strict.answer(Self.signRequest(strict.blob(), [1]), session: &session) == .failure)
        for (flags, algorithm) in [(UInt32(2), "rsa-sha2-256"), (4, "rsa-sha2-512")] {
            let answer = strict.answer(Self.signRequest(strict.blob(), [1], flags: flags), session: &session)
            #expect(Self.verifies(answer, data: [1], key: strict.keys[0]))
            guard case .signature(let blob) = answer else { continue }
            #expect(blob.dropFirst(4).starts(with: algorithm.utf8))
        }
        let loose = try Served(type: .rsa, options: .allowSHA1)
        guard case .signature(let blob) = loose.answer(Self.signRequest(loose.blob(), [1]), session: &session) else {
            Issue.record("no SHA-1 signature with --ssh-allow-sha1"); return
        }
        #expect(blob.dropFirst(4).starts(with: "ssh-rsa".utf8))
    }

    @Test func test_answer_signsWithECDSAKeysWhoseSignaturesVerify() throws {
        for type in [SSHKeyType.ecdsaP256, .ecdsaP384, .ecdsaP521] {
            let served = try Served(type: type)
            var session = SSHAgentSession()
            #expect(Self.verifies(served.answer(Self.signRequest(served.blob(), [5, 6]), session: &session), data: [5, 6], key: served.keys[0]), "\(type)")
        }
    }

    @Test func test_sessionBind_verifiesECDSAAndRSAHostKeys() throws {
        let served = try Served()
        for type in [SSHKeyType.ecdsaP256, .rsa] {
            let host = try SSHPrivateKey.generate(type, rsaBits: 2048, comment: "host")
            var session = SSHAgentSession()
            #expect(served.answer(try Self.bind(host, sessionID: [1, 2, 3]), session: &session) == .success, "\(type)")
            var forged = SSHAgentSession()
            #expect(served.answer(try Self.bind(host, sessionID: [1, 2, 3], forger: try SSHPrivateKey.generate(type, rsaBits: 2048, comment: "f")),
                                  session: &forged) == .extensionFailure)
        }
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
        #expect(Self.verifies(served.answer(good, session: &session), data: [1, 2], key: served.keys[0]))
    }

    // MARK: - session-bind@openssh.com

    @Test func test_sessionBind_acceptsAVerifiedBindAndUserauthMustCarryItsSessionID() throws {
        let served = try Served()
        var session = SSHAgentSession()
        let host = try Self.host(), sid = Array(repeating: UInt8(0x42), count: 32)
        #expect(served.answer(try Self.bind(host, sessionID: sid), session: &session) == .success)
        let hostBlob = host.publicKey.wireBytes
        let right = Self.userauth(sessionID: sid, key: served.blob(), hostKey: hostBlob)
        #expect(Self.verifies(served.answer(Self.signRequest(served.blob(), right), session: &session), data: right, key: served.keys[0]))
        let plain = Self.userauth(sessionID: sid, key: served.blob())
        #expect(Self.verifies(served.answer(Self.signRequest(served.blob(), plain), session: &session), data: plain, key: served.keys[0]))
        let otherSession = Self.userauth(sessionID: Array(repeating: 1, count: 32), key: served.blob())
        #expect(served.answer(Self.signRequest(served.blob(), otherSession), session: &session) == .failure)
        let otherHost = Self.userauth(sessionID: sid, key: served.blob(), hostKey: try Self.host().publicKey.wireBytes)
        #expect(served.answer(Self.signRequest(served.blob(), otherHost), session: &session) == .failure)
    }

    @Test func test_sessionBind_aFailedBindBeforeAnyBindingCountsAsForwarded() throws {
        // As OpenSSH's ssh-agent: a failed bind is no reason to stop every signature, but the
        // connection may be a forwarded one whose bind failed, so keys kept from forwarded
        // connections refuse, and a later binding does not undo it.
        let strict = try Served()
        var session = SSHAgentSession()
        let forged = try Self.bind(try Self.host(), sessionID: [1, 2, 3], forger: try Self.host())
        #expect(strict.answer(forged, session: &session) == .extensionFailure)
        #expect(session.bindFailed && session.failedUnbound && session.isForwarded)
        #expect(strict.answer(Self.signRequest(strict.blob(), [1]), session: &session) == .failure)
        #expect(strict.answer(try Self.bind(try Self.host(), sessionID: [4]), session: &session) == .success)
        #expect(strict.answer(Self.signRequest(strict.blob(), [1]), session: &session) == .failure, "a later binding does not undo it")
        let loose = try Served(options: .allowForwarding)
        var other = SSHAgentSession()
        #expect(loose.answer(forged, session: &other) == .extensionFailure)
        #expect(Self.verifies(loose.answer(Self.signRequest(loose.blob(), [1]), session: &other), data: [1], key: loose.keys[0]))
    }

    @Test func test_sessionBind_aFailureAfterABindingLeavesTheBindingAsItWas() throws {
        let served = try Served()
        var session = SSHAgentSession()
        let host = try Self.host(), sid = Array(repeating: UInt8(3), count: 32)
        #expect(served.answer(try Self.bind(host, sessionID: sid), session: &session) == .success)
        #expect(served.answer(try Self.bind(host, sessionID: [9], forger: try Self.host()), session: &session) == .extensionFailure)
        #expect(session.bindFailed && !session.failedUnbound && !session.isForwarded)
        let auth = Self.userauth(sessionID: sid, key: served.blob())
        #expect(Self.verifies(served.answer(Self.signRequest(served.blob(), auth), session: &session), data: auth, key: served.keys[0]))
    }

    @Test func test_sessionBind_aConnectionBoundForAuthenticationTakesNoOtherBinding() throws {
        let served = try Served()
        var session = SSHAgentSession()
        let host = try Self.host()
        #expect(served.answer(try Self.bind(host, sessionID: [1]), session: &session) == .success)
        // OpenSSH's rule: not even the same binding again, nor a forwarding one after it.
        #expect(served.answer(try Self.bind(host, sessionID: [1]), session: &session) == .extensionFailure)
        #expect(served.answer(try Self.bind(host, sessionID: [2], forwarding: true), session: &session) == .extensionFailure)
        #expect(session.binds.count == 1 && !session.isForwarded)
    }

    @Test func test_sessionBind_keepsAtMost16AndRefusesASessionIDUnderAnotherHostKey() throws {
        let served = try Served()
        var session = SSHAgentSession()
        let host = try Self.host()
        // Forwarding bindings, one per hop: an authentication binding takes no other after it.
        for index in 0..<16 {
            #expect(served.answer(try Self.bind(host, sessionID: [UInt8(index), 1], forwarding: true), session: &session) == .success)
        }
        #expect(served.answer(try Self.bind(host, sessionID: [0, 1], forwarding: true), session: &session) == .success, "the same binding again")
        #expect(served.answer(try Self.bind(host, sessionID: [99, 1], forwarding: true), session: &session) == .extensionFailure)
        var second = SSHAgentSession()
        #expect(served.answer(try Self.bind(host, sessionID: [5], forwarding: true), session: &second) == .success)
        #expect(served.answer(try Self.bind(try Self.host(), sessionID: [5], forwarding: true), session: &second) == .extensionFailure)
        #expect(second.bindFailed && !second.failedUnbound)
    }

    @Test func test_sessionBind_aForwardedConnectionSignsOnlyWithKeysThatAllowIt() throws {
        let strict = try Served()
        var session = SSHAgentSession()
        #expect(strict.answer(try Self.bind(try Self.host(), sessionID: [1], forwarding: true), session: &session) == .success)
        #expect(strict.answer(Self.signRequest(strict.blob(), [1]), session: &session) == .failure)
        let loose = try Served(options: .allowForwarding)
        var forwarded = SSHAgentSession()
        #expect(loose.answer(try Self.bind(try Self.host(), sessionID: [1], forwarding: true), session: &forwarded) == .success)
        #expect(Self.verifies(loose.answer(Self.signRequest(loose.blob(), [1]), session: &forwarded), data: [1], key: loose.keys[0]))
    }

    // MARK: - The confirm command

    @Test func test_confirm_isToldTheFingerprintPurposeDestinationAndForwarding() throws {
        let served = try Served(options: .confirm, confirmCommand: "true")
        var session = SSHAgentSession()
        let host = try Self.host(), sid: [UInt8] = [7, 7]
        #expect(served.answer(try Self.bind(host, sessionID: sid), session: &session) == .success)
        var seen: [SSHConfirmRequest] = []
        let auth = Self.userauth(sessionID: sid, key: served.blob())
        _ = served.answer(Self.signRequest(served.blob(), auth), session: &session) { seen.append($0); return true }
        let sshsig = Array("SSHSIG".utf8) + Self.string(Array("git".utf8)) + Self.string([]) + Self.string(Array("sha512".utf8)) + Self.string([1])
        _ = served.answer(Self.signRequest(served.blob(), sshsig), session: &session) { seen.append($0); return true }
        #expect(served.answer(Self.signRequest(served.blob(), [9]), session: &session) { seen.append($0); return false } == .failure)
        #expect(seen.map(\.purpose) == ["userauth", "sshsig", "other"])
        #expect(seen[0].hostKeyFingerprint == host.publicKey.fingerprint && seen[0].user == "git")
        #expect(seen[1].namespace == "git" && seen[1].hostKeyFingerprint == nil)
        #expect(seen.allSatisfy { $0.fingerprint == served.keys[0].publicKey.fingerprint && $0.command == "true" && !$0.forwarded && $0.path == "/v" })
    }

    @Test func test_confirm_aVaultLockedWhileItRunsSignsNothing() throws {
        let served = try Served(options: .confirm, confirmCommand: "true")
        var session = SSHAgentSession()
        let answer = served.answer(Self.signRequest(served.blob(), [1]), session: &session) { _ in
            _ = served.keyring.withLock { $0.forget(vaultID: served.vaultID) }
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
        let brief = try SSHPrivateKey.generate(.ed25519, comment: "brief")
        let handOver = SSHKeyHandOver(name: "ssh/k0", comment: "brief", options: [], lifetimeSeconds: 10, privateKey: try brief.openSSHText())
        let request = SSHKeysHandOver(vaultID: served.vaultID, fileKey: served.fileKey, replacing: true, prefix: "ssh/k0", keys: [handOver])
        let key = SSHServedKey(handOver, key: brief, now: 5)
        _ = try served.keyring.withLock { keyring throws(AgentKeyring.Refusal) in try keyring.serveSSHKeys(request, keys: [key], now: 5) }
        #expect(served.keyring.withLock { $0.sshIdentities(now: 6).map(\.comment) } == ["brief", "key1"])
        #expect(served.keyring.withLock { $0.nextExpiry } == 15)
        _ = served.keyring.withLock { $0.expire(now: 15) }
        #expect(served.keyring.withLock { $0.sshIdentities(now: 15).map(\.comment) } == ["key1"])
    }
}
