#if canImport(Glibc)
import Glibc
#endif

// MARK: - Notices shown at most once in a while

extension StateFolder {
    /// Whether the notice `kind` about vault `vaultID` is due, that is, not shown within the last
    /// `interval` seconds; a due notice is recorded as shown `now`, so that of several processes
    /// at once one shows it.
    ///
    /// The record is `<vault id in hex>.<kind>`, two lines: `vaultfile-notice 1` and `shown
    /// <seconds since 1970>`. A time in the future (a clock set back) makes the notice due. When
    /// the folder cannot be written the notice is due every time, and the problem is thrown
    /// with the answer (`Problem` carries no answer: the caller shows the notice then).
    public func claimNotice(_ kind: String, vault vaultID: [UInt8], every interval: Int64, now: Int64 = Int64(time(nil))) throws(Problem) -> Bool {
        let name = SeenGenerations.Record.hex(vaultID) + "." + kind
        func isDue(_ bytes: [UInt8]?) -> Bool {
            guard let bytes, let text = String(validating: bytes, as: UTF8.self) else { return true }
            let lines = text.split(separator: "\n")
            guard lines.count == 2, lines[0] == "vaultfile-notice 1", lines[1].hasPrefix("shown "),
                  let shown = Int64(lines[1].dropFirst("shown ".count)) else { return true }
            return shown > now || now - shown >= interval
        }
        // Most runs find the notice shown recently: a read, no lock and no write.
        guard isDue(try read(name)) else { return false }
        return try update(name) { current in
            isDue(current) ? Array("vaultfile-notice 1\nshown \(now)\n".utf8) : nil
        }
    }
}
