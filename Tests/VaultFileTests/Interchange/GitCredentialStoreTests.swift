import Testing
@testable import VaultInterchange
@testable import VaultModel

/// What the git credential helper's `store` writes (`GitCredentialEntries.storePlan`, `.store`):
/// names that read back as the request they came from, one entry per protocol, no second copy of
/// an entry without a user, one version of history per store, an erased entry back from the trash.
@Suite struct GitCredentialStoreTests {
    private func makeVault(_ entries: [String: (String, [String: String])], history: Bool = false) throws -> Vault {
        var vault = Vault()
        if history { try vault.enableHistory(.standard) }
        for (name, (value, fields)) in entries {
            try vault.put(Entry(value: Array(value.utf8), fields: fields.mapValues { Array($0.utf8) }, created: 1, modified: 1), as: name, now: 1)
        }
        return vault
    }

    private func request(_ text: String) throws -> GitCredentialRequest { try GitCredentialRequest.parse(Array(text.utf8)) }

    private func text(_ vault: Vault, _ name: String, _ part: EntryPart = .value) -> String? {
        try? vault.withValue(of: name, part: part) { String(decoding: $0, as: UTF8.self) }
    }

    // MARK: - Names read back as the request

    /// The attacker's review: a user name `evil.com/x` for github.com must not become
    /// `git/evil.com/x@github.com`, which reads back as host evil.com, path x@github.com.
    @Test func test_storePlan_refusesAUserNameThatWouldReadBackAsAnotherHost() throws {
        var vault = try makeVault(["git/github.com": ("PAT", ["username": "me"])])
        let planted = try request("protocol=https\nhost=github.com\nusername=evil.com/x\npassword=PAT\n")
        guard case .refused(let why) = GitCredentialEntries.storePlan(for: planted, in: vault) else {
            Issue.record("a user name with '/' was not refused")
            return
        }
        #expect(why.contains("user name") && !why.contains("PAT"), "\(why)")
        #expect(try GitCredentialEntries.store(planted, in: &vault) == .refused(why))
        #expect(vault.names(withPrefix: "git/") == ["git/github.com"])
        let probe = try request("protocol=https\nhost=evil.com\npath=x@github.com/repo.git\n")
        #expect(GitCredentialEntries.lookUp(probe, in: vault) == .none)
        // '#' (a field in references), ':' , spaces, backslashes and wildcards are refused too; an e-mail is not.
        for user in ["a#b", "a b", "a\\c", "a*?", "a:b", "%2Fx", "\u{FF0F}x"] {
            let hostile = try request("protocol=https\nhost=h\nusername=\(user)\npassword=p\n")
            guard case .refused = GitCredentialEntries.storePlan(for: hostile, in: vault) else { Issue.record("\(user) was not refused"); continue }
        }
        let mail = try request("protocol=https\nhost=h\nusername=me+git@example.org\npassword=p\n")
        #expect(GitCredentialEntries.storePlan(for: mail, in: vault) == .set(name: "git/h", fields: ["username": "me+git@example.org"]))
    }

    @Test func test_storePlan_refusesAHostThatIsNoHostName() throws {
        let vault = try makeVault([:])
        for host in ["a/b", "u@h", "h#x", "h:", "h:123456", "h:8a", "[::1", "[zz]", "a b", ".", "..", "h:80:81"] {
            let hostile = try request("protocol=https\nhost=\(host)\nusername=u\npassword=p\n")
            guard case .refused = GitCredentialEntries.storePlan(for: hostile, in: vault) else { Issue.record("\(host) was not refused"); continue }
        }
        for host in ["[::1]:8080", "[fe80::1]", "münchen.example", "h_x.example:8443"] {
            guard case .set = GitCredentialEntries.storePlan(for: try request("protocol=https\nhost=\(host)\nusername=u\npassword=p\n"), in: vault) else {
                Issue.record("\(host) was refused")
                continue
            }
        }
    }

    /// For every credential `store` writes, over hostile user names, hosts and paths and over vaults
    /// whose first names are taken: parsing the name back gives the same protocol, user, host, port
    /// and path, and the request is answered by that entry.
    @Test func test_store_everyNameItWritesReadsBackAsTheRequest() throws {
        let pieces = ["a", "B", "x", "1", "/", "@", "#", ":", "%2F", " ", "\\", "*", ".", "..", ".git", "[", "]", "-", "_", "+",
                      "é", "e\u{301}", "\u{338}", "\u{FF20}", "\u{FF0F}", "xn--", "443", "80", "::1", "~", "'", "=", ";"]
        var generator = SplitMix(seed: 43)
        func hostile(_ most: Int) -> String { (0..<Int.random(in: 1...most, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined() }
        var written = 0
        for round in 0..<1_500 {
            let protocolName = ["https", "http", "smtp", "ftp"][round % 4]
            let user = round % 5 == 0 ? "me" : hostile(4)
            let host = round % 3 == 0 ? "h" + (round % 2 == 0 ? ":8080" : "") : hostile(4)
            let path = round % 2 == 0 ? nil : hostile(6)
            var text = "protocol=\(protocolName)\nhost=\(host)\nusername=\(user)\npassword=pw\(round)\n"
            if let path { text += "path=\(path)\n" }
            guard let parsed = try? request(text) else { continue }
            // Vaults where the first names are free, another user's, or another protocol's.
            let tail = GitCredentialEntries.pathComponents(path).joined(separator: "/")
            let hostPart = GitCredentialEntries.normalizedHost(host, protocolName: protocolName)
            let taken = "git/" + hostPart + (tail.isEmpty ? "" : "/" + tail)
            let others: [[String: (String, [String: String])]] = [
                [:], [taken: ("other", ["username": "someone-else"])],
                [taken: ("other", ["protocol": protocolName == "https" ? "http" : "https", "username": user])],
            ]
            for other in others {
                var vault = (try? makeVault(other)) ?? Vault()
                guard case .stored(let name, _) = try GitCredentialEntries.store(parsed, in: &vault) else { continue }
                written += 1
                let parts = try #require(GitCredentialName.parse(name))
                let fields = try #require(vault.entry(name)).fields
                let storedUser = parts.user ?? fields["username"].map { String(decoding: $0, as: UTF8.self) }
                let storedProtocol = fields["protocol"].map { String(decoding: $0, as: UTF8.self) } ?? "https"
                #expect(storedProtocol == protocolName, "\(name)")
                #expect(storedUser == user, "\(name): user \(String(describing: storedUser)) ≠ \(user)")
                #expect(GitCredentialEntries.normalizedHost(parts.host, protocolName: protocolName) == hostPart, "\(name): host \(parts.host) ≠ \(host)")
                #expect(parts.path == GitCredentialEntries.pathComponents(path).map(String.init), "\(name): path ≠ \(path ?? "")")
                guard case .found(let match) = GitCredentialEntries.lookUp(parsed, in: vault) else { Issue.record("\(name) does not answer"); continue }
                #expect(match.name == name, "\(name) vs \(match.name)")
            }
        }
        #expect(written > 300, "too few credentials written (\(written)) for the property to mean much")
    }

    // MARK: - One entry per protocol

    @Test func test_storePlan_keepsOneEntryPerProtocol() throws {
        // A: an https entry of the same host and user is not converted by an http store.
        var vault = try makeVault(["git/github.com": ("typed", ["username": "me"])])
        #expect(try GitCredentialEntries.store(request("protocol=http\nhost=github.com\nusername=me\npassword=clear\n"), in: &vault)
                == .stored(name: "git/me@github.com", fromTrash: false))
        #expect(text(vault, "git/github.com") == "typed" && text(vault, "git/github.com", .field("protocol")) == nil)
        #expect(text(vault, "git/me@github.com", .field("protocol")) == "http")
        guard case .found(let https) = GitCredentialEntries.lookUp(try request("protocol=https\nhost=github.com\n"), in: vault) else {
            Issue.record("https no longer answered")
            return
        }
        #expect(https.name == "git/github.com")
        // B: an http entry first, then https of the same host and user: two entries, the https one never sent in clear.
        var moved = try makeVault([:])
        _ = try GitCredentialEntries.store(request("protocol=http\nhost=moved.example\nusername=me\npassword=OLD\n"), in: &moved)
        #expect(try GitCredentialEntries.store(request("protocol=https\nhost=moved.example\nusername=me\npassword=NEW\n"), in: &moved)
                == .stored(name: "git/me@moved.example", fromTrash: false))
        #expect(text(moved, "git/moved.example") == "OLD" && text(moved, "git/me@moved.example") == "NEW")
        guard case .found(let http) = GitCredentialEntries.lookUp(try request("protocol=http\nhost=moved.example\n"), in: moved) else {
            Issue.record("http not answered")
            return
        }
        #expect(http.name == "git/moved.example")
        // Both names taken by the other protocol: the default port written out (which reads back as the host).
        var both = try makeVault(["git/h": ("a", ["username": "me"]), "git/me@h": ("b", [:])])
        #expect(try GitCredentialEntries.store(request("protocol=http\nhost=h\nusername=me\npassword=c\n"), in: &both)
                == .stored(name: "git/h:80", fromTrash: false))
        guard case .found(let port) = GitCredentialEntries.lookUp(try request("protocol=http\nhost=h:80\n"), in: both) else {
            Issue.record("http not answered from git/h:80")
            return
        }
        #expect(port.name == "git/h:80" && text(both, "git/h") == "a" && text(both, "git/me@h") == "b")
    }

    // MARK: - An entry without a user

    /// An entry holding only a value is shared by every user and stays so. The cold user's review:
    /// git asked for a user and stored the same token: nothing written, no `git/typed@…` copy. The
    /// re-attack: a store from another user (a URL naming `mallory@`) with the same token must not
    /// take the shared entry over (alice's fill would stop answering); another token gets its own entry.
    @Test func test_store_leavesAnEntryWithoutAUserSharedByEveryUser() throws {
        var vault = try makeVault(["git/nouser.example": ("tok", [:])])
        #expect(try GitCredentialEntries.store(request("protocol=https\nhost=nouser.example\nusername=typed\npassword=tok\n"), in: &vault) == .unchanged)
        #expect(try GitCredentialEntries.store(request("protocol=https\nhost=nouser.example\nusername=mallory\npassword=tok\n"), in: &vault) == .unchanged)
        #expect(vault.names(withPrefix: "git/") == ["git/nouser.example"] && text(vault, "git/nouser.example", .field("username")) == nil)
        guard case .found(let alice) = GitCredentialEntries.lookUp(try request("protocol=https\nhost=nouser.example\nusername=alice\n"), in: vault) else {
            Issue.record("the shared entry no longer answers alice")
            return
        }
        #expect(alice.name == "git/nouser.example")
        #expect(try GitCredentialEntries.store(request("protocol=https\nhost=nouser.example\nusername=mallory\npassword=other\n"), in: &vault)
                == .stored(name: "git/mallory@nouser.example", fromTrash: false))
        #expect(text(vault, "git/nouser.example") == "tok" && text(vault, "git/mallory@nouser.example") == "other")
    }

    /// The re-attack: a login failing for a user named in the URL erased the shared entry that
    /// answered it. An entry without a user is never erased for a request that names one.
    @Test func test_eraseTarget_neverRemovesAnEntryWithoutAUserForANamedUser() throws {
        let vault = try makeVault(["git/h": ("shared", [:])])
        #expect(GitCredentialEntries.eraseTarget(for: try request("protocol=https\nhost=h\nusername=mallory\npassword=shared\n"), in: vault) == nil)
        #expect(GitCredentialEntries.eraseTarget(for: try request("protocol=https\nhost=h\npassword=shared\n"), in: vault) == "git/h")
    }

    // MARK: - History and the trash

    @Test func test_store_isOneVersionOfHistory() throws {
        var vault = try makeVault(["git/h": ("a", ["username": "u"])], history: true)
        _ = try GitCredentialEntries.store(request("protocol=http\nhost=new.example\nusername=u\npassword=p\n"), in: &vault)
        #expect(try vault.history(of: "git/new.example").isEmpty, "a new entry has no earlier version")
        _ = try GitCredentialEntries.store(request("protocol=http\nhost=new.example\nusername=u\npassword=q\n"), in: &vault)
        #expect(try vault.history(of: "git/new.example").count == 1)
    }

    /// git's erase of a password that failed, then store of the one that worked: the entry comes back
    /// from the trash with its history (nothing dropped), the erased value its newest earlier version.
    @Test func test_store_afterAnEraseBringsTheEntryBackWithItsHistory() throws {
        var vault = try makeVault(["git/alice@h": ("v1", ["notes": "kept"])], history: true)
        try vault.setValue(Array("v2".utf8), for: "git/alice@h", now: 2)
        let failed = try request("protocol=https\nhost=h\nusername=alice\npassword=v2\n")
        let name = try #require(GitCredentialEntries.eraseTarget(for: failed, in: vault))
        try vault.remove(name, now: 3)
        #expect(try GitCredentialEntries.store(request("protocol=https\nhost=h\nusername=alice\npassword=v3\n"), in: &vault, now: 4)
                == .stored(name: "git/alice@h", fromTrash: true))
        #expect(text(vault, "git/alice@h") == "v3" && text(vault, "git/alice@h", .field("notes")) == "kept")
        #expect(try vault.history(of: "git/alice@h").map { String(decoding: $0.entry.value, as: UTF8.self) } == ["v2", "v1"])
        #expect(vault.endedRemovedLines.isEmpty, "nothing dropped from the trash")
    }

    /// The re-attack: a name in the trash holding another user's credential is not brought back for
    /// this one (its history would hand this user the other's old passwords): a new entry takes the
    /// name and the removed one's versions are dropped (the CLI says so).
    @Test func test_store_neverRestoresAnotherUsersCredentialFromTheTrash() throws {
        var vault = try makeVault(["git/t.example": ("OTHERSECRET", ["username": "other"])], history: true)
        try vault.remove("git/t.example", now: 2)
        let outcome = try GitCredentialEntries.store(request("protocol=https\nhost=t.example\nusername=u\npassword=UPW\n"), in: &vault, now: 3)
        guard case .stored(let name, let fromTrash) = outcome else {
            Issue.record("nothing stored: \(outcome)")
            return
        }
        #expect(!fromTrash)
        #expect(text(vault, name) == "UPW" && text(vault, name, .field("username")) == "u")
        #expect(try vault.history(of: name).allSatisfy { String(decoding: $0.entry.value, as: UTF8.self) != "OTHERSECRET" })
    }

    // MARK: - erase

    @Test func test_eraseTarget_removesNothingWithoutAPassword() throws {
        let vault = try makeVault(["git/h": ("right", ["username": "u"])])
        #expect(GitCredentialEntries.eraseTarget(for: try request("protocol=https\nhost=h\nusername=u\n"), in: vault) == nil)
        #expect(GitCredentialEntries.eraseTarget(for: try request("protocol=https\nhost=h\nusername=u\npassword=right\n"), in: vault) == "git/h")
    }
}

/// A small seeded generator, so that a failure of the property test can be replayed.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
