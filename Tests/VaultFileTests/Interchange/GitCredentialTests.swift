import Testing
@testable import VaultInterchange
@testable import VaultModel

/// git's credential protocol as the helper reads it (`GitCredentialRequest`) and the entries that
/// answer it (`GitCredentialEntries`): success, then failures, then edge cases.
@Suite struct GitCredentialTests {
    /// A vault holding `entries`: name → (value, fields).
    private func vault(_ entries: [String: (String, [String: String])]) throws -> Vault {
        var vault = Vault()
        for (name, (value, fields)) in entries {
            try vault.setValue(Array(value.utf8), for: name)
            for (field, text) in fields { try vault.setField(field, value: Array(text.utf8), for: name) }
        }
        return vault
    }

    private func request(_ text: String) throws -> GitCredentialRequest { try GitCredentialRequest.parse(Array(text.utf8)) }

    private func answer(_ text: String, _ vault: Vault) throws -> String? {
        guard case .found(let match) = GitCredentialEntries.lookUp(try request(text), in: vault) else { return nil }
        return match.name
    }

    // MARK: - parse

    @Test func test_parse_readsTheAttributesAndPassesOverNewerOnes() throws {
        let parsed = try request("""
            capability[]=authtype
            capability[]=state
            protocol=HTTPS
            host=example.com:8443
            path=org/repo.git
            username=alice
            password=p=w
            password_expiry_utc=1700000000
            oauth_refresh_token=xyz
            wwwauth[]=Basic realm="x"
            some_future_key=1

            ignored=after the blank line
            """)
        #expect(parsed.protocolName == "https" && parsed.host == "example.com:8443" && parsed.path == "org/repo.git")
        #expect(parsed.username == "alice" && parsed.password == Array("p=w".utf8))
    }

    @Test func test_parse_takesCRLFAndTheLastOfARepeatedKey() throws {
        let parsed = try request("protocol=https\r\nhost=a\r\nhost=b\r\n\r\n")
        #expect(parsed.host == "b" && parsed.protocolName == "https")
    }

    @Test func test_parse_refusesALineWithoutEquals() {
        #expect(throws: VaultError.self) { try request("protocol=https\nhost\n") }
        #expect(throws: VaultError.self) { try request("=value\n") }
    }

    @Test func test_parse_refusesANulByteAndControlCharactersInNames() {
        #expect(throws: VaultError.self) { try GitCredentialRequest.parse(Array("protocol=https\nhost=a\u{0}b\n".utf8)) }
        #expect(throws: VaultError.self) { try request("host=a\u{1B}[2Jb\n") }
        #expect(throws: VaultError.self) { try GitCredentialRequest.parse([0x68, 0x6F, 0x73, 0x74, 0x3D, 0xFF, 0x0A]) }
    }

    @Test func test_end_refusesALongLineOnceItPassesTheLimit() throws {
        let long = [UInt8](repeating: 0x61, count: GitCredentialRequest.maxLineLength + 1)
        #expect(throws: VaultError.self) { try GitCredentialRequest.end(in: long) }
        // At the limit, and still without a line end: more may come.
        #expect(try GitCredentialRequest.end(in: Array(long.dropLast())) == nil)
        let many = Array(String(repeating: "k=" + String(repeating: "v", count: 1000) + "\n", count: 1100).utf8)
        #expect(throws: VaultError.self) { try GitCredentialRequest.end(in: many) }
    }

    @Test func test_end_findsTheBlankLine() throws {
        #expect(try GitCredentialRequest.end(in: Array("a=b\n\nc=d".utf8)) == 5)
        #expect(try GitCredentialRequest.end(in: Array("a=b\r\n\r\n".utf8)) == 7)
        #expect(try GitCredentialRequest.end(in: Array("a=b\n".utf8)) == nil)
    }

    // MARK: - lookUp

    @Test func test_lookUp_answersFromTheHostEntry() throws {
        let vault = try vault(["git/example.com": ("pw", ["username": "alice"]), "git/other.org": ("x", [:]), "web/example.com": ("y", [:])])
        let found = GitCredentialEntries.lookUp(try request("protocol=https\nhost=example.com\n"), in: vault)
        #expect(found == .found(.init(name: "git/example.com", username: "alice", depth: 0, userMatched: false)))
        #expect(try answer("protocol=https\nhost=EXAMPLE.com:443\n", vault) == "git/example.com")
        #expect(try answer("protocol=https\nhost=example.com:8443\n", vault) == nil)
        #expect(try answer("protocol=https\nhost=nowhere\n", vault) == nil)
    }

    @Test func test_lookUp_takesTheMostSpecificPath() throws {
        let vault = try vault(["git/h": ("a", [:]), "git/h/org": ("b", [:]), "git/h/org/repo": ("c", [:]), "git/h/orgx": ("d", [:])])
        #expect(try answer("protocol=https\nhost=h\npath=org/repo.git\n", vault) == "git/h/org/repo")
        #expect(try answer("protocol=https\nhost=h\npath=org/other.git\n", vault) == "git/h/org")
        #expect(try answer("protocol=https\nhost=h\npath=org\n", vault) == "git/h/org")
        #expect(try answer("protocol=https\nhost=h\n", vault) == "git/h")
    }

    @Test func test_lookUp_servesOnlyTheEntrysProtocol() throws {
        let vault = try vault(["git/h:8080": ("a", ["protocol": "http"]), "git/s": ("b", [:])])
        #expect(try answer("protocol=http\nhost=h:8080\n", vault) == "git/h:8080")
        #expect(try answer("protocol=https\nhost=h:8080\n", vault) == nil)
        // An https entry is never sent in clear.
        #expect(try answer("protocol=http\nhost=s\n", vault) == nil)
    }

    @Test func test_lookUp_choosesByTheRequestsUser() throws {
        let vault = try vault(["git/alice@h": ("a", [:]), "git/bob@h": ("b", [:]), "git/h": ("c", ["username": "carol"])])
        #expect(try answer("protocol=https\nhost=h\nusername=bob\n", vault) == "git/bob@h")
        #expect(try answer("protocol=https\nhost=h\nusername=carol\n", vault) == "git/h")
        #expect(try answer("protocol=https\nhost=h\nusername=dave\n", vault) == nil)
        let ambiguous = GitCredentialEntries.lookUp(try request("protocol=https\nhost=h\n"), in: vault)
        #expect(ambiguous == .ambiguousUsers(["git/alice@h", "git/bob@h", "git/h"]))
    }

    @Test func test_lookUp_userInTheNameMayHoldAnAt() throws {
        let vault = try vault(["git/me@example.org@h": ("a", [:])])
        let found = GitCredentialEntries.lookUp(try request("protocol=https\nhost=h\nusername=me@example.org\n"), in: vault)
        #expect(found == .found(.init(name: "git/me@example.org@h", username: "me@example.org", depth: 0, userMatched: true)))
    }

    @Test func test_lookUp_answersNothingWithoutProtocolOrHost() throws {
        let vault = try vault(["git/h": ("a", [:])])
        #expect(try answer("host=h\n", vault) == nil)
        #expect(try answer("protocol=cert\npath=/a/cert.p12\n", vault) == nil)
    }

    // MARK: - store and erase

    @Test func test_storePlan_writesANewEntryAndNothingWhenUnchanged() throws {
        var vault = try vault([:])
        let new = try request("protocol=http\nhost=h:8080\nusername=u\npassword=p\n")
        #expect(GitCredentialEntries.storePlan(for: new, in: vault) == .set(name: "git/h:8080", fields: ["username": "u", "protocol": "http"]))
        try vault.setValue(Array("p".utf8), for: "git/h:8080")
        try vault.setField("username", value: Array("u".utf8), for: "git/h:8080")
        try vault.setField("protocol", value: Array("http".utf8), for: "git/h:8080")
        #expect(GitCredentialEntries.storePlan(for: new, in: vault) == .nothing)
        let changed = try request("protocol=http\nhost=h:8080\nusername=u\npassword=q\n")
        #expect(GitCredentialEntries.storePlan(for: changed, in: vault) == .set(name: "git/h:8080", fields: [:]))
    }

    @Test func test_storePlan_givesASecondUserAnEntryOfTheirOwn() throws {
        let vault = try vault(["git/h": ("a", ["username": "alice"])])
        let bob = try request("protocol=https\nhost=h:443\nusername=bob\npassword=b\n")
        #expect(GitCredentialEntries.storePlan(for: bob, in: vault) == .set(name: "git/bob@h", fields: ["username": "bob"]))
        let path = try request("protocol=https\nhost=h\npath=org/r.git\nusername=alice\npassword=a\n")
        #expect(GitCredentialEntries.storePlan(for: path, in: vault) == .set(name: "git/h/org/r.git", fields: ["username": "alice"]))
    }

    @Test func test_storePlan_refusesANameThatCannotBeAnEntry() throws {
        let vault = try vault([:])
        guard case .refused = GitCredentialEntries.storePlan(for: try request("protocol=https\nhost=h\npath=a/../b\nusername=u\npassword=p\n"), in: vault) else {
            Issue.record("a path with '..' was not refused")
            return
        }
        #expect(GitCredentialEntries.storePlan(for: try request("protocol=https\nhost=h\nusername=u\n"), in: vault) == .nothing)
    }

    @Test func test_eraseTarget_onlyWhenThePasswordIsTheEntrysValue() throws {
        let vault = try vault(["git/h": ("right", ["username": "u"])])
        #expect(GitCredentialEntries.eraseTarget(for: try request("protocol=https\nhost=h\nusername=u\npassword=right\n"), in: vault) == "git/h")
        #expect(GitCredentialEntries.eraseTarget(for: try request("protocol=https\nhost=h\nusername=u\npassword=wrong\n"), in: vault) == nil)
        // Without a password (newer git may send erase so): nothing (GitCredentialStoreTests).
        #expect(GitCredentialEntries.eraseTarget(for: try request("protocol=https\nhost=h\nusername=u\n"), in: vault) == nil)
        #expect(GitCredentialEntries.eraseTarget(for: try request("protocol=https\nhost=x\n"), in: vault) == nil)
    }
}

/// The one reference grammar (`SecretReference`) of templates, `read` and `exec --env-file`.
@Suite struct SecretReferenceTests {
    @Test func test_parse_nameAndField() {
        #expect(SecretReference.parse("vf://db/prod") == SecretReference(name: "db/prod"))
        #expect(SecretReference.parse("vf://db/prod#username") == SecretReference(name: "db/prod", field: "username"))
        #expect(SecretReference.parse("vf-totp://site") == SecretReference(name: "site", isTOTP: true))
        #expect(SecretReference.parse("vf://my entry#f") == SecretReference(name: "my entry", field: "f"))
    }

    @Test func test_parse_refusesWhatIsNoReference() {
        #expect(SecretReference.parse("op://a/b") == nil)
        #expect(SecretReference.parse("vf://") == nil)
        #expect(SecretReference.parse("vf-totp://a#f") == nil)
        #expect(SecretReference.parse("db/prod") == nil)
    }

    /// `##` is one `#` in the name, and a `#` at the end closes the name: forms that never resolved before.
    @Test func test_parse_escapes() {
        #expect(SecretReference.parse("vf://a##b#user") == SecretReference(name: "a#b", field: "user"))
        #expect(SecretReference.parse("vf://a##b") == SecretReference(name: "a#b"))
        #expect(SecretReference.parse("vf://name #") == SecretReference(name: "name "))
        #expect(SecretReference.parse("vf://a####") == SecretReference(name: "a##"))
        #expect(SecretReference.parse("vf://a###") == SecretReference(name: "a#"))
        #expect(SecretReference.parse("vf://a\\#b") == SecretReference(name: "a\\", field: "b"), "a backslash keeps its old meaning")
    }

    /// Every reference that resolved before the escapes (at most one '#', a valid field after it) means what it meant.
    @Test func test_parse_keepsTheMeaningOfEveryWorkingReference() {
        for (name, field) in [("a", nil), ("a", "f"), ("a\\", "f"), ("x y", "user.name-2"), ("é/ü", nil), ("a b ", "f")] as [(String, String?)] {
            let written = "vf://" + name + (field.map { "#" + $0 } ?? "")
            #expect(SecretReference.parse(written) == SecretReference(name: name, field: field), "\(written)")
        }
    }

    @Test func test_text_writesTheReferenceBack() {
        for reference in [SecretReference(name: "a#b", field: "f"), SecretReference(name: "n "), SecretReference(name: "t", isTOTP: true)] {
            #expect(SecretReference.parse(reference.text) == reference, "\(reference.text)")
        }
    }

    @Test func test_templates_useTheEscapes() throws {
        var vault = Vault()
        try vault.setValue(Array("hash".utf8), for: "a#b")
        try vault.setValue(Array("blank".utf8), for: "n ")
        try vault.setField("f", value: Array("field".utf8), for: "a#b")
        let rendered = try Template.render(Array("{{ vf://a##b }} {{ vf://a##b#f }} {{ vf://n # }}".utf8), from: vault)
        #expect(String(decoding: rendered, as: UTF8.self) == "hash field blank")
    }

    @Test func test_referenceEnvFile_readsReferencesAndText() throws {
        let lines = try ReferenceEnvFile.parse(Array("# c\nDB=vf://db#user\nexport CODE=\"vf-totp://site\"\nPLAIN=hello\n".utf8))
        #expect(lines.map(\.variable) == ["DB", "CODE", "PLAIN"])
        #expect(lines[0].value == .reference(SecretReference(name: "db", field: "user")))
        #expect(lines[1].value == .reference(SecretReference(name: "site", isTOTP: true)))
        #expect(lines[2].value == .literal(Array("hello".utf8)))
        #expect(throws: VaultError.self) { try ReferenceEnvFile.parse(Array("A.B=vf://x\n".utf8)) }
        #expect(throws: VaultError.self) { try ReferenceEnvFile.parse(Array("9A=vf://x\n".utf8)) }
        #expect(throws: VaultError.self) { try ReferenceEnvFile.parse(Array("A=vf://\n".utf8)) }
    }
}
