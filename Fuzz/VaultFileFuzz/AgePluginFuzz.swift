import SecureMemory
import VaultFormat

// MARK: - The age-plugin protocol

/// The identity that the seeds in Fuzz/age-plugin-seeds wrap their X25519 stanzas to (the CCTV
/// vectors' identity), so mutations reach the unwrap.
private let pluginIdentity = try! AgeIdentity(parsing: "AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0")

/// Property 12: a client's bytes to `age-plugin-vaultfile` (phase 1 of identity-v1) never crash
/// the reader, the request or the trial unwrap; every stanza read writes back to exactly the bytes
/// it was read from (one encoding per stanza); an identity line that parses writes back to itself.
func fuzzAgePlugin(_ bytes: [UInt8]) {
    var reader = AgePluginStanzaReader(limits: .plugin)
    var request = AgePluginIdentityRequest()
    var consumed = 0
    // Fed in two pieces, so a stanza cut across reads is exercised as well.
    let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    do {
        for piece in [bytes[..<cut], bytes[cut...]] {
            try reader.feed(piece)
            while let stanza = try reader.next() {
                let encoded = stanza.pluginMessage()
                precondition(bytes[consumed...].starts(with: encoded), "age-plugin stanza round trip changed the bytes")
                consumed += encoded.count
                if try request.take(stanza) { break }
            }
        }
    } catch {}
    for stanzas in request.files { _ = AgePluginUnwrap.unwrap(stanzas, with: [pluginIdentity]) }
    for line in request.identities {
        if let identity = try? VaultfilePluginIdentity(parsing: line) {
            precondition(identity.line == line || identity.line == line.uppercased(), "plugin identity round trip changed the line")
        }
    }
}
