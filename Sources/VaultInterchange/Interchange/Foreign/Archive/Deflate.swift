import CZlib
import SecureMemory
import VaultModel

// MARK: - gzip through the system zlib (the KDBX export's payload)

/// Compresses bytes into one gzip member (RFC 1952) with the system zlib, as KDBX files hold
/// their XML. zlib's own memory is zeroed before it is freed (`vaultfile_zlib_free`).
enum Deflate {
    /// `bytes` as one gzip member, at zlib's level 6 (its default: KeePass's and KeePassXC's too).
    static func gzip(_ bytes: [UInt8]) throws(VaultError) -> [UInt8] {
        var stream = z_stream()
        guard vaultfile_deflate_init(&stream, 6) == Z_OK else { throw .limitExceeded("zlib could not allocate its memory to compress") }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let code = bytes.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target -> Int32 in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = uInt(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = uInt(target.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard code == Z_STREAM_END else {
            wipe(&output)
            throw .limitExceeded("zlib could not compress the export (error \(code))")
        }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }
}
