import SecureMemory
import Testing
@testable import VaultFormat
@testable import VaultModel

/// `SSHKeyEntry`: how an entry holds an ssh key, which entries the agent serves, and reading one back.
@Suite struct SSHKeyEntryTests {
    @Test func test_store_setsTheValueAndFieldsAndKeepsTheOthers() throws {
        var vault = Vault()
        try vault.setField("notes", value: Array("deploy key".utf8), for: "ssh/deploy")
        let key = try SSHPrivateKey.generate(.ecdsaP256, comment: "ci@example")
        try SSHKeyEntry.store(key, as: "ssh/deploy", in: &vault)
        let entry = try #require(vault.entry("ssh/deploy"))
        #expect(entry.fields["notes"] == Array("deploy key".utf8))
        #expect(entry.fields["ssh-key"] == Array("ecdsa-sha2-nistp256".utf8))
        #expect(entry.fields["public"] == Array(key.authorizedKeysLine.utf8))
        #expect(entry.fields["comment"] == Array("ci@example".utf8))
        #expect(entry.fields["fingerprint"] == Array(key.publicKey.fingerprint.utf8))
        #expect(entry.value.starts(with: Array("-----BEGIN OPENSSH PRIVATE KEY-----\n".utf8)))
        let read = try SSHKeyEntry.key(of: "ssh/deploy", in: vault)
        #expect(read.publicKey == key.publicKey && read.comment == "ci@example")
        #expect(read.publicKey.verifies(signature: try read.sign([1], flags: 0), of: [1]))
    }

    @Test func test_store_dropsAStaleCommentForAKeyWithout() throws {
        var vault = Vault()
        try SSHKeyEntry.store(try SSHPrivateKey.generate(.ed25519, comment: "old"), as: "k", in: &vault)
        try SSHKeyEntry.store(try SSHPrivateKey.generate(.ed25519, comment: ""), as: "k", in: &vault)
        #expect(vault.entry("k")?.fields["comment"] == nil)
    }

    @Test func test_names_listsOnlyMarkedEntriesUnderThePrefix() throws {
        var vault = Vault()
        try SSHKeyEntry.store(try SSHPrivateKey.generate(.ed25519, comment: ""), as: "ssh/a", in: &vault)
        try SSHKeyEntry.store(try SSHPrivateKey.generate(.ed25519, comment: ""), as: "work/b", in: &vault)
        try vault.setValue(Array("-----BEGIN OPENSSH PRIVATE KEY-----".utf8), for: "ssh/plain")
        #expect(SSHKeyEntry.names(in: vault) == ["ssh/a", "work/b"])
        #expect(SSHKeyEntry.names(in: vault, prefix: "ssh/") == ["ssh/a"])
    }

    @Test func test_key_refusesAnEntryWithoutTheMarkerOrWithADamagedValue() throws {
        var vault = Vault()
        try vault.setValue(Array("not a key".utf8), for: "plain")
        #expect(throws: SSHKeyError.self) { _ = try SSHKeyEntry.key(of: "plain", in: vault) }
        try vault.setField("ssh-key", value: Array("ssh-ed25519".utf8), for: "plain")
        #expect(throws: SSHKeyError.self) { _ = try SSHKeyEntry.key(of: "plain", in: vault) }
        #expect(throws: VaultError.self) { _ = try SSHKeyEntry.key(of: "missing", in: vault) }
    }
}
