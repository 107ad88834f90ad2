import KDF
import TestSupport
import Testing

/// PBKDF2-HMAC-SHA256 against every Wycheproof vector (which include RFC 7914 §11).
@Suite struct PBKDF2Tests {
    // MARK: - deriveKey: success

    @Test(.enabled(if: Wycheproof.available, "../shared/vectors is absent: Wycheproof PBKDF2 vectors skipped"))
    func test_deriveKey_matchesEveryWycheproofVector() throws {
        let file = try Wycheproof.load("pbkdf2_hmacsha256_test.json")
        var executed = 0
        for test in file.tests {
            let password = Hex.decode(test["password"] as! String)
            let salt = Hex.decode(test["salt"] as! String)
            let iterations = UInt32(test["iterationCount"] as! Int)
            let length = test["dkLen"] as! Int
            let expected = Hex.decode(test["dk"] as! String)
            #expect(test["result"] as? String == "valid", "every PBKDF2 vector in the file is valid")
            let key = try password.withUnsafeBytes {
                try PBKDF2.deriveKey(password: $0, salt: salt, parameters: .init(iterations: iterations), outputLength: length)
            }
            #expect(key.withUnsafeBytes { Array($0) } == expected, "tcId \(test["tcId"] ?? "?")")
            executed += 1
        }
        #expect(executed == file.numberOfTests)
        #expect(executed == 60)
    }

    // MARK: - deriveKey: failure

    @Test func test_deriveKey_rejectsZeroIterations() {
        #expect(throws: KDFError.self) {
            try [UInt8]().withUnsafeBytes {
                try PBKDF2.deriveKey(password: $0, salt: [1, 2, 3], parameters: .init(iterations: 0))
            }
        }
    }
}
