import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The fast paths of the foreign readers against their plain references (issue 44's speed work):
/// a site from an ASCII URL by its bytes against the Character steps.
@Suite struct ForeignFastPathTests {
    // MARK: - site(of:)

    @Test func test_site_asciiBytesAgreeWithTheCharacterSteps() throws {
        let chosen = ["https://news.ycombinator.com/", "https://x.example/a/b/", "ftp://user@host.example/path?q=1#f",
                      "http://a@b@c.example", "http://a@b/c@d", "HTTPS://Upper.Example//", "a+b-c.d://site", "1http://x",
                      "://nohost", "https://", "https:///path", "https://?q", "ht tp://x", "https://  spaced  /", "https://a/\t",
                      "mailto:x@y", "x://@", "x:///", "s://h#frag/x", "s://h?q/x@y", "https://host.example:8443/login"]
        for url in chosen {
            #expect(ForeignNaming.site(of: url) == ForeignNaming.siteByCharacters(of: url), "\(url)")
        }
        // Random ASCII from the characters the steps look at, with a fixed seed (the same in every run).
        var generator = SplitMix(seed: 44)
        let alphabet = Array("ab1+-.:/@?# \t")
        for _ in 0..<3_000 {
            let url = String((0..<Int(generator.next() % 24)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            #expect(ForeignNaming.site(of: url) == ForeignNaming.siteByCharacters(of: url), "\(url.debugDescription)")
        }
    }

    @Test func test_site_nonASCIITakesTheCharacterSteps() throws {
        // A combining mark after '/' makes one Character that is not "/": the Character steps decide.
        for url in ["https://bücher.example/", "https://x.example/\u{301}a", "https://ü@x.example"] {
            #expect(ForeignNaming.site(of: url) == ForeignNaming.siteByCharacters(of: url), "\(url)")
        }
        #expect(ForeignNaming.site(of: "https://bücher.example/") == "bücher.example")
    }

    @Test func test_site_noSchemeIsNil() throws {
        #expect(ForeignNaming.site(of: nil) == nil)
        #expect(ForeignNaming.site(of: "example.com") == nil)
        #expect(ForeignNaming.site(of: "https://") == nil)
    }
}
