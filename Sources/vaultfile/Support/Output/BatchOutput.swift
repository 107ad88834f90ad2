import SecureMemory
import VaultModel

// MARK: - What batch lines print, and how it is framed

/// The output of a batch script, framed as `batch` was asked (docs/JSON.md, man vaultfile):
///
/// - `plain` (the default, as always): get's bytes and list's lines back to back, so that
///   `x=$(echo 'get a' | vaultfile batch)` keeps working;
/// - `nul` (`-z`): each get or list result ends with a NUL; a value that holds a NUL itself
///   cannot be framed so and fails its line, pointing to `--json`;
/// - `json` (`--json`): one JSON object per command line, `{"line", "verb", "ok"}`, with get's
///   `value` and `encoding` (base64 when not UTF-8) and list's `names`.
///
/// Values are written into one buffer that is wiped (`SecretJSON`): no String holds them.
struct BatchOutput {
    /// How results are framed.
    enum Framing {
        case plain, nul, json
    }

    let framing: Framing
    private var out: SecretJSON

    init(framing: Framing) {
        self.framing = framing
        out = SecretJSON()
    }

    /// What was written, to go to stdout once every line succeeded.
    var bytes: [UInt8] { out.bytes }

    /// Zeroes the buffer.
    mutating func wipe() { out.wipe() }

    /// Starts the result of a line (JSON: the object's first keys).
    mutating func begin(line: Int, verb: String) {
        guard framing == .json else { return }
        out.raw("{\"line\":\(line),\"verb\":\(JSON.quote(verb)),\"ok\":true")
    }

    /// Ends the result of a line.
    mutating func end() {
        guard framing == .json else { return }
        out.raw("}\n")
    }

    /// get's result: the bytes of a value.
    mutating func value(_ value: UnsafeRawBufferPointer) throws {
        switch framing {
        case .plain:
            out.bytes.append(contentsOf: value)
        case .nul:
            guard !value.contains(0) else {
                throw CLIError.refused("the value holds a NUL byte, which -z cannot frame",
                                       hint: "use --json instead of -z: a JSON string carries any value (in base64 when it is not UTF-8)")
            }
            out.bytes.reserveCapacity(out.bytes.count + value.count + 1)
            out.bytes.append(contentsOf: value)
            out.bytes.append(0)
        case .json:
            out.raw(",")
            out.value(value)
        }
    }

    /// list's result: names, each ending with a newline (as `List.apply` writes them).
    mutating func names(_ listing: [UInt8]) {
        switch framing {
        case .plain:
            out.bytes += listing
        case .nul:
            out.bytes += listing + [0]
        case .json:
            let names = listing.split(separator: 0x0A).map { JSON.string(String(decoding: $0, as: UTF8.self)) }
            out.raw(",\"names\":" + JSON.array(names).text)
        }
    }

    /// The JSON object of the line that failed (only with --json; nothing else is printed then).
    static func failure(line: Int, verb: String, error: any Error) -> String {
        let report = ErrorReport(error) ?? ErrorReport(description: String(describing: error), hint: nil, status: .failure)
        return JSON.object([
            ("line", .int(Int64(line))), ("verb", .string(verb)), ("ok", .bool(false)),
            ("error", .string(report.description)), ("status", .int(Int64(report.status.rawValue))),
        ]).text + "\n"
    }
}
