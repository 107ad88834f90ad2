#if canImport(Glibc)
import Glibc
#endif
import KDF
import SecureMemory
import VaultAgent
import VaultFile
import VaultFormat
import VaultInterchange
import VaultModel

// MARK: - libFuzzer entry point

/// The password of the damaged-vault corpus, so seeds from Fixtures/damaged open and
/// mutations reach the payload and content parsers.
private let password = SecureBytes(copying: Array("damaged-corpus".utf8))

/// The identity of C2SP's age specification, which the corpus's 1.1 vaults have a recipient slot
/// for: mutations reach the X25519 unwrap and the metadata block.
private let identity = try! AgeIdentity(parsing: "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX")

/// The 2,048-bit ssh-rsa key of Fixtures/v1.4, which the corpus's long-keys vaults have a slot
/// for (read from the working folder, the repository's root, as scripts/fuzz.sh runs): mutations
/// reach the RSA-OAEP unwrap and the metadata of version 2. Nil when the file is not there.
private let rsaIdentity: SSHRSAIdentity? = {
    guard let file = fopen("Fixtures/v1.4/ssh-rsa-2048.key", "r") else { return nil }
    defer { fclose(file) }
    var bytes = [UInt8](repeating: 0, count: 8192)
    let count = fread(&bytes, 1, bytes.count, file)
    return try? SSHRSAIdentity.parse(Array(bytes.prefix(count)), source: "fuzz")
}()

/// Tiny caps: a mutated header may ask for any KDF cost, and the fuzzer must stay fast.
private let limits = KDFLimits(maxMemoryBytes: 64 << 10, maxArgon2WorkKiB: 256, maxPBKDF2Iterations: 1_000)

/// The password of Fixtures/kdbx's databases (the KDBX seeds).
private let kdbxPassword = KDBXCredentials(password: SecureBytes(copying: Array("kdbx-fixture".utf8)), keyFileKey: nil)

/// A keyring holding one key, so that agent lookups parse the header and run the MAC check.
nonisolated(unsafe) private var keyring: AgentKeyring = {
    var keyring = AgentKeyring()
    let handOver = AgentKeyHandOver(vaultID: Array(repeating: 0, count: 16), fileKey: SecureBytes(count: 32), timeoutSeconds: 0,
                                    onlyIfHeld: false, path: "fuzz", confirmCommand: "")
    _ = try? keyring.add(handOver, now: 0)
    return keyring
}()

/// Opens a whole file in memory through the one way in (`VaultCodec.open`), ignoring its error.
private func open(_ bytes: [UInt8], with unlocker: Unlocker) {
    guard let parsed = try? VaultCodec.parse(bytes, path: "fuzz") else { return }
    var payload = parsed.payload
    _ = try? VaultCodec.open(header: parsed.header, payload: &payload, with: unlocker)
}

/// Properties checked on every input:
/// 1. parsing never crashes; a header that parses re-serialises to exactly the bytes it came from;
/// 2. opening never crashes (it may throw);
/// 3. content that decodes (version 1, and version 2 with its history section checked) re-encodes
///    to exactly the same bytes (one encoding per vault);
/// 4. the parsers of unlock secrets and keyslot metadata (Bech32, age identity files and
///    recipients, OpenSSH keys and ssh-ed25519 lines, passphrase-protected OpenSSH keys (decrypted
///    too when of at most 2 rounds) and age -p identity files, recovery codes) never crash, and a Bech32
///    string that decodes encodes back to itself (in its case).
/// 5. the agent's request and response parsers (docs/AGENT.md) never crash, and a body that
///    decodes re-encodes to exactly the same bytes; the agent's header and sign lookups never crash.
/// 6. the signed seal's parsers (format 1.3): the seal record in a metadata plaintext, and the
///    signature block's plaintext, which re-encodes to exactly the same bytes when it decodes;
///    and those of format 1.4's long keys (metadata version 2, the signature block of version 2,
///    with the same round trip), ssh-rsa public keys (lines and wire encodings) and OpenSSH RSA
///    private keys (whole files, and a public key and private section as a decryptor hands them).
/// 7. `audit --hibp`'s breach list (the input as the file sorted by hash, in an unlinked temporary file): it opens or
///    is refused, and lookups anywhere in it (the first and last hash, one in the middle) answer or
///    throw, never crash (`searchBreachList`).
/// 8. otpauth URIs (`TOTPParameters`, Steam's encoder included) never crash, nor a code from one.
/// 9. the readers of other managers' exports (issue 44: KeePass XML, the CSV families, 1pux,
///    Enpass JSON; 1pux and Enpass also built as read) and the inflater, gzip and ZIP reader under
///    them never crash.
/// 10. the importers of encrypted sources (issue 44): a pass file's content, an ansible-vault
///    envelope or YAML file with `!vault` values, a sops YAML/JSON file (its tree, metadata, values
///    and MAC under a fixed data key) never crash.
/// 11. age v1 files (`receive`, and `age -p` identity files): binary or armored, with the CCTV
///    vectors' identity and passphrase (and the ssh-rsa key above, for ssh-rsa stanzas), never crash; a header that parses re-encodes to exactly
///    its bytes (one encoding per header); and nothing is returned from a file that fails.
/// 12. age-plugin conversations (AgePluginFuzz.swift): never a crash; one encoding per stanza.
/// 13. KDBX files (`import --format kdbx`): with the password of Fixtures/kdbx (make-kdbx.py: tiny
///    KDFs within the caps above), mutations reach the header, the HMAC blocks, gzip, the inner
///    header and the XML; never a crash, whatever the bytes.
/// 14. ssh private keys kept as entries (`SSHKeyFile`, `SSHPublicKey`, signature blobs): see SSHKeys.swift.
/// 15. the ssh-agent socket (issue 42): a message body answered by `SSHAgentResponder` over a keyring
///    serving one ed25519 key (listing, signing, binding, and the rest) on one connection that
///    keeps its bindings across inputs, and what a SIGN_REQUEST's data is (`SSHSignedData`): never a
///    crash; a signature only for the served key.
/// 16. git's credential requests (`GitCredentialRequest`: framing and parsing) and the reference
///    grammar (`SecretReference`, `exec --env-file` files) never crash; a reference that parses
///    writes back to a text that parses to it again (issue 43).
/// 17. post-quantum keys, type-8 slots and mlkem768x25519 age files (PostQuantumFuzz.swift), and a
///    vault with a type-8 slot opened with the CCTV post-quantum identity: never a crash.
/// 18. the age-plugin client (PluginClientFuzz.swift): a plugin's replies, plugin slot bodies and
///    plugin recipients and identities never crash; only 16-byte file keys for indices sent, wraps
///    within their limits, one encoding per slot body (issue 41).
/// 19. the reader of an import's sorted runs (RecordRunsFuzz.swift): hostile plaintext behind valid
///    authentication and a damaged file never crash; a changed file never reads back (issue 44).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if onlyRecordRuns {
        fuzzRecordRuns(bytes)
        return 0
    }
    var slots: [Keyslot] = []
    if let (header, length) = try? VaultHeader.parse(bytes, path: "fuzz") {
        let encoded = header.encoded()
        precondition(encoded.count == length && encoded[...] == bytes[0..<length], "header round trip changed the bytes")
        slots = header.keyslots
    }
    open(bytes, with: Unlocker(credentials: [UnlockCredential(.password(password), source: "the password")], limits: limits))
    open(bytes, with: Unlocker(credentials: [UnlockCredential(.ageIdentity(identity), source: "fuzz")], limits: limits))
    if let rsaIdentity, slots.contains(where: { $0.typeByte == 7 }) {
        open(bytes, with: Unlocker(credentials: [UnlockCredential(.sshRSAIdentity(rsaIdentity), source: "fuzz")], limits: limits))
    }
    if slots.contains(where: { $0.typeByte == HybridSlot.type }) {
        open(bytes, with: Unlocker(credentials: [UnlockCredential(.pqIdentity(pqIdentity), source: "fuzz")], limits: limits))
    }
    _ = try? MetadataBlock.decode(bytes, slots: slots)
    _ = try? MetadataBlock.decode(bytes, slots: slots, longKeys: true)
    _ = try? SealRecordCodec.decodeMetadata(bytes, slots: slots)
    _ = try? SealRecordCodec.decodeMetadata(bytes, slots: slots, longKeys: true)
    if let block = try? SignatureBlock.decode(bytes) {
        precondition((try? SignatureBlock.encode(block)) == bytes, "signature block round trip changed the bytes")
    }
    if let block = try? SignatureBlock.decodeLongKeys(bytes) {
        precondition((try? SignatureBlock.encodeLongKeys(block, plaintextLength: bytes.count)) == bytes, "long-keys signature block round trip changed the bytes")
    }
    fuzzRSAKeys(bytes)
    fuzzSSHKeys(bytes)
    let text = String(decoding: bytes, as: UTF8.self)
    if size <= 4096 {
        if let decoded = try? Bech32.decode(text) {
            let upper = text.utf8.contains { (0x41...0x5A).contains($0) }
            let again = Bech32.encode(humanReadablePart: decoded.humanReadablePart, data: decoded.data, upperCase: upper)
            precondition(again == text, "Bech32 round trip changed the text")
        }
        _ = try? AgeRecipient(parsing: text)
        _ = try? SSHEd25519PublicKey(parsing: text)
        _ = try? RecoveryCode(parsing: SecureBytes(copying: bytes))
        // otpauth URIs (an imported TOTP, encoder=steam included): parsing and a code never crash.
        if let parameters = try? TOTPParameters(uri: bytes) { _ = try? OneTimePassword.totp(parameters, at: 59) }
    }
    _ = try? AgeIdentityFile.parse(bytes, source: "fuzz")
    _ = try? SSHEd25519Identity.parse(bytes, source: "fuzz")
    // Passphrase-protected identities: every field checked before any work. A key of at most
    // 2 bcrypt rounds is decrypted too (a wrong passphrase, or damage: never a crash).
    if let key = try? OpenSSHProtectedKey.parseIfProtected(bytes, source: "fuzz"), key.rounds <= 2 {
        _ = try? key.decrypt(passphrase: SecureBytes(copying: Array("fuzz".utf8)))
    }
    _ = try? AgeProtectedIdentityFile.parseIfProtected(bytes, source: "fuzz")
    if let vault = try? Vault(decodingContent: bytes) {
        precondition((try? vault.encodedContent()) == bytes, "content round trip changed the bytes")
    }
    if let vault = try? Vault(decodingHistoryContent: bytes) {
        precondition((try? vault.encodedContent()) == bytes, "history content round trip changed the bytes")
    }
    let body = UnsafeRawBufferPointer(start: data, count: size)
    if let request = try? AgentRequest.decode(body: body) {
        precondition(request.frame().withUnsafeBytes { $0.dropFirst(AgentProtocol.lengthPrefix).elementsEqual(body) },
                     "agent request round trip changed the bytes")
    }
    if let response = try? AgentResponse.decode(body: body) {
        precondition(response.frame().withUnsafeBytes { $0.dropFirst(AgentProtocol.lengthPrefix).elementsEqual(body) },
                     "agent response round trip changed the bytes")
    }
    _ = try? keyring.match(header: bytes, now: 0)
    // The agent's `sign` lookup parses a signed header's prefix (HeaderPrefix) and opens its
    // metadata block with the held key: never a crash, whatever the bytes.
    _ = try? keyring.signer(forPrefix: bytes, now: 0, wallClock: 0)
    fuzzSSHAgent(bytes)
    searchBreachList(bytes)
    for format in [InterchangeFormat.keepassXML, .bitwardenCSV, .onePasswordCSV, .onePUX, .lastPassCSV, .chromeCSV, .firefoxCSV,
                   .dashlaneCSV, .enpassJSON] {
        _ = try? Interchange.readForeign(bytes, format: format, now: 0)
    }
    // The same readers with the import's options: items handed to the builder as read (the
    // stream's sink), and the plain read whenever the stream declines.
    for format in [InterchangeFormat.onePUX, .enpassJSON] {
        _ = try? Interchange.read(bytes, format: format, now: 0, options: ForeignBuildOptions())
    }
    ForeignArchiveFuzzing.exercise(bytes)
    fuzzEncryptedImports(bytes)
    fuzzAgeFile(bytes)
    fuzzPostQuantum(bytes, limits: ageLimits)
    if size <= 1 << 20 { fuzzAgePlugin(bytes) }
    if size <= 1 << 20 { fuzzPluginClient(bytes) }
    _ = try? KDBXReader.read(bytes, file: "fuzz", credentials: kdbxPassword, limits: limits, now: 0)
    fuzzReferences(bytes)
    fuzzRecordRuns(bytes)
    return 0
}

/// `VAULTFILE_FUZZ_ONLY=record-runs` (scripts/fuzz.sh passes its environment on): property 19 alone.
private let onlyRecordRuns = getenv("VAULTFILE_FUZZ_ONLY").map { String(cString: $0) } == "record-runs"

// MARK: - git credential requests and references

/// Property 12.
private func fuzzReferences(_ bytes: [UInt8]) {
    _ = try? GitCredentialRequest.end(in: bytes)
    if var request = try? GitCredentialRequest.parse(bytes) {
        var vault = Vault()
        try? vault.setValue(Array("p".utf8), for: "git/h")
        _ = GitCredentialEntries.lookUp(request, in: vault)
        _ = try? GitCredentialEntries.storePlan(for: request, in: vault)
        request.wipePassword()
    }
    _ = try? ReferenceEnvFile.parse(bytes)
    if bytes.count <= 4096, let text = String(validating: bytes, as: UTF8.self), let reference = SecretReference.parse(text) {
        precondition(SecretReference.parse(reference.text) == reference, "a reference written back parses to another")
    }
}

// MARK: - age files

/// The identity and passphrase of C2SP's CCTV age vectors (the seeds in Fuzz/age-seeds are those
/// vectors' files), so mutations reach the unwrap, the MAC and the payload.
private let ageIdentity = try! AgeIdentity(parsing: "AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0")
private let agePassphrase = SecureBytes(copying: Array("password".utf8))
/// scrypt up to 2^10 (1 MiB, the vectors' work factor): anything more is refused, fast.
private let ageLimits = KDFLimits(maxMemoryBytes: 1 << 20, maxArgon2WorkKiB: 1, maxPBKDF2Iterations: 1)

/// Property 11: never a crash; the header's one encoding.
private func fuzzAgeFile(_ bytes: [UInt8]) {
    if let header = try? AgeHeader.parse(bytes[...]) {
        precondition(header.encoded().elementsEqual(bytes.prefix(header.length)), "age header round trip changed the bytes")
    }
    _ = try? AgeFile.needsPassphrase(bytes)
    _ = try? AgeFile.decrypt(bytes, identities: [ageIdentity], passphrase: agePassphrase, limits: ageLimits, maxPlaintext: 1 << 20)
    // The ssh-rsa stanza's checks and OAEP unwrap (the Fixtures/v1.4 key, when the file is there).
    if let rsaIdentity { _ = try? AgeFile.decrypt(bytes, identities: [rsaIdentity], passphrase: nil, limits: ageLimits, maxPlaintext: 1 << 20) }
}

// MARK: - Importers of encrypted sources

/// The fixed vault password and sops data key the importers are fuzzed with (the seeds in
/// Fuzz/import-seeds use them, so mutations reach the HMAC, the values and the MAC).
private let importPassword = SecureBytes(copying: Array("fixture-password".utf8))
private let sopsDataKey = SecureBytes(copying: [UInt8](repeating: 0x42, count: 32))

/// Property 10: never a crash, whatever the bytes.
/// ssh-rsa public keys and OpenSSH RSA private keys: parsing never crashes; a wire key that
/// parses re-encodes to exactly its bytes (one encoding per key).
private func fuzzRSAKeys(_ bytes: [UInt8]) {
    if let key = try? SSHRSAPublicKey(wire: bytes) {
        precondition(key.wireBytes == bytes, "ssh-rsa wire key round trip changed the bytes")
    }
    if bytes.count <= 8192 {
        _ = try? SSHRSAPublicKey(parsing: String(decoding: bytes, as: UTF8.self))
        _ = SSHRSAIdentity.holdsRSAKey(bytes)
        _ = try? SSHRSAIdentity.parse(bytes, source: "fuzz")
        // The seam a protected key's decryptor uses: the first length-prefixed part as the public key.
        if bytes.count >= 4 {
            let length = min(Int(bytes[0]) << 8 | Int(bytes[1]), bytes.count - 2)
            _ = try? SSHRSAIdentity.parse(publicWire: Array(bytes[2..<(2 + length)]), privateSection: Array(bytes[(2 + length)...]), source: "fuzz")
        }
    }
}

private func fuzzEncryptedImports(_ bytes: [UInt8]) {
    _ = try? PassReader.item(ForeignStoreFile(path: ["fuzz"], bytes: bytes))
    if bytes.count <= 1 << 16 {
        _ = try? AnsibleVaultReader.read(bytes, file: "fuzz", name: "fuzz", password: importPassword)
    }
    if let document = try? SopsReader.parse(bytes, file: "fuzz") {
        _ = try? SopsReader.read(document, dataKey: sopsDataKey, file: "fuzz", name: "fuzz")
    }
}

// MARK: - The breach list of audit --hibp

/// One unlinked file, rewritten with each input, that the breach list opens through /proc/self/fd.
private let breachListFile: Int32 = {
    var template = Array("/tmp/vaultfile-fuzz-hibp-XXXXXX".utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    if fd >= 0 { template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) } }
    return fd
}()

/// Property 7: the input as a Pwned Passwords file sorted by hash, opened and searched.
private func searchBreachList(_ bytes: [UInt8]) {
    let fd = breachListFile
    guard fd >= 0, ftruncate(fd, 0) == 0,
          bytes.withUnsafeBytes({ pwrite(fd, $0.baseAddress, $0.count, 0) }) == bytes.count,
          let list = try? PwnedPasswords(path: "/proc/self/fd/\(fd)") else { return }
    for fill: UInt8 in [0x00, 0x7F, 0xFF] {
        _ = try? list.occurrences(ofDigest: [UInt8](repeating: fill, count: list.hash.digestLength))
    }
}

// MARK: - The ssh-agent socket

/// One ed25519 key served from a held vault (its seed fixed), and one connection's state.
private let sshKeyring: LockedValue<AgentKeyring> = {
    let keyring = LockedValue(AgentKeyring())
    let vaultID = Array(repeating: UInt8(1), count: 16), fileKey = SecureBytes(count: 32)
    keyring.withLock { _ = try? $0.add(AgentKeyHandOver(vaultID: vaultID, fileKey: fileKey, timeoutSeconds: 0, onlyIfHeld: false,
                                                         path: "fuzz", confirmCommand: ""), now: 0) }
    guard let key = try? SSHPrivateKey.generate(.ed25519, comment: "fuzz") else { return keyring }
    let handOver = SSHKeyHandOver(name: "ssh/fuzz", comment: "fuzz", options: [.allowSHA1], lifetimeSeconds: 0, privateKey: SecureBytes(count: 1))
    let request = SSHKeysHandOver(vaultID: vaultID, fileKey: fileKey, replacing: true, prefix: "", keys: [handOver])
    keyring.withLock { _ = try? $0.serveSSHKeys(request, keys: [SSHServedKey(handOver, key: key, now: 0)], now: 0) }
    return keyring
}()
nonisolated(unsafe) private var sshSession = SSHAgentSession()

/// Property 12.
private func fuzzSSHAgent(_ bytes: [UInt8]) {
    let answer = SSHAgentResponder.answer(bytes, session: &sshSession, keyring: sshKeyring, now: { 1 }, confirm: { _ in true })
    if case .signature = answer, case .sign(let blob, _, _)? = SSHAgentRequest.decode(bytes) {
        precondition(sshKeyring.withLock { $0.sshKey(blob: blob, now: 1) } != nil, "signed with a key that is not served")
    }
    if sshSession.binds.count >= SSHAgentProtocol.maxBinds || sshSession.bindFailed { sshSession = SSHAgentSession() }
    _ = SSHSignedData.classify(bytes)
}
