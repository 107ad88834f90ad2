import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Arguments that are not UTF-8

/// Refuses a command line with an argument that is not UTF-8.
///
/// `CommandLine.arguments` replaces each invalid byte with U+FFFD, so `\xff\xfe` and `\xfe\xff`
/// would name the same entry, and a path with a Latin-1 byte would name another file. The raw
/// bytes are checked before ArgumentParser sees the repaired strings.
enum ArgumentEncoding {
    /// Throws `invalidArgument` (exit 64) naming the first argument (1-based, after the program
    /// name) that is not UTF-8, shown with its bytes escaped.
    static func check(_ arguments: [[UInt8]]) throws(CLIError) {
        for (index, bytes) in arguments.enumerated() where String(validating: bytes, as: UTF8.self) == nil {
            throw .invalidArgument("argument \(index + 1) is not valid UTF-8 (\(escaped(bytes))); "
                                   + "vaultfile reads names, paths and options as UTF-8 text")
        }
    }

    /// The bytes of every argument after the program name, as the kernel passed them.
    static var rawArguments: [[UInt8]] {
        (1..<Int(CommandLine.argc)).map { index in
            guard let argument = CommandLine.unsafeArgv[index] else { return [] }
            return Array(UnsafeRawBufferPointer(start: argument, count: strlen(argument)))
        }
    }

    /// Valid UTF-8 shown as text (control and format characters escaped), every other byte as `\xNN`;
    /// at most 80 bytes, then `…`.
    static func escaped(_ bytes: [UInt8]) -> String {
        var shown = ""
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.prefix(80).makeIterator()
        var offset = 0
        loop: while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || EntryName.isFormatCharacter(scalar) || scalar == "\\" {
                    shown += scalar == "\\" ? "\\\\" : "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
                } else {
                    shown.unicodeScalars.append(scalar)
                }
                offset += encoded.count
            case .error(let length):
                for byte in bytes[offset..<offset + length] { shown += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true) }
                offset += length
            case .emptyInput:
                break loop
            }
        }
        return bytes.count > 80 ? shown + "…" : shown
    }
}

