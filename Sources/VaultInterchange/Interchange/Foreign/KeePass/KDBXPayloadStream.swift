import SecureMemory
import VaultModel

// MARK: - A KDBX payload read in order

/// The decrypted payload of a KDBX file, read from its start a piece at a time: a KDBX 4 inner
/// header field by field, then the XML a window at a time for `XMLReader`. A gzip-compressed
/// payload is inflated as it is read (`InflateStream`), so that the inflated XML is never whole in
/// memory; an uncompressed one is read where it lies.
///
/// Damage of the compressed stream is the file's (`sourceDamaged`): the payload was authenticated
/// (KDBX 4's HMAC blocks, 3.1's hashes under the cipher) before anything is read from it.
final class KDBXPayloadStream {
    /// The file, for messages.
    let file: String
    private let payload: UnsafeBufferPointer<UInt8>
    private let inflater: InflateStream?
    /// Bytes of an uncompressed payload read so far.
    private var offset = 0

    /// The payload `payload` (valid for the stream's life), gzip-compressed when `inflatedSize`
    /// (its declared size, checked by the caller against its limits) is given.
    init(_ payload: UnsafeBufferPointer<UInt8>, inflatedSize: Int?, file: String) throws(VaultError) {
        self.payload = payload
        self.file = file
        inflater = try inflatedSize.map { (size) throws(VaultError) in try InflateStream(payload, size: size, wrapper: .gzip, what: "\(file): the payload") }
    }

    /// The bytes not read yet (of the declared size, when compressed).
    var remaining: Int { inflater.map { $0.size - $0.produced } ?? payload.count - offset }

    /// Fills `target` with the next bytes (all of it unless fewer remain) and returns how many; 0 at the end.
    func read(into target: UnsafeMutableBufferPointer<UInt8>) throws(VaultError) -> Int {
        if let inflater {
            do { return try inflater.read(into: target) } catch { throw damage(error) }
        }
        let count = min(target.count, payload.count - offset)
        if count > 0 { target.baseAddress!.update(from: payload.baseAddress! + offset, count: count) }
        offset += count
        return count
    }

    /// The first buffer of `take`, which grows from there as bytes arrive.
    static let firstTake = 1 << 20

    /// The next `count` bytes, once `count` is known to remain (what is allocated grows with the
    /// bytes read, never ahead of them to `count`);
    /// `name` and `what` name the field in the message.
    func take(_ count: Int, _ name: String, what: String) throws(VaultError) -> [UInt8] {
        guard count >= 0, count <= remaining else {
            throw .sourceDamaged(file: file, why: "\(what): \(name) says \(count) bytes, but only \(remaining) remain (the file is truncated or damaged)")
        }
        // Memory follows the bytes inflated, never the length a field claims: `remaining` trusts
        // the gzip trailer's size, which is the file's author's word (a 4 MiB file may claim
        // about 1 GiB). The buffer starts at 1 MiB at most and doubles as bytes arrive, each
        // outgrown buffer wiped (an attachment is a secret).
        var bytes = [UInt8](repeating: 0, count: min(count, Self.firstTake))
        var filled = 0
        var failure: VaultError?
        while filled < count {
            if filled == bytes.count {
                var larger = [UInt8](repeating: 0, count: min(count, bytes.count * 2))
                larger.withUnsafeMutableBytes { to in bytes.withUnsafeBytes { to.copyMemory(from: $0) } }
                SecureMemory.wipe(&bytes)
                bytes = larger
            }
            let got = bytes.withUnsafeMutableBufferPointer { buffer -> Int in
                do throws(VaultError) {
                    return try read(into: UnsafeMutableBufferPointer(rebasing: buffer[filled...]))
                } catch {
                    failure = error
                    return 0
                }
            }
            if got == 0 { break }
            filled += got
        }
        if let failure { SecureMemory.wipe(&bytes); throw failure }
        guard filled == count else {
            SecureMemory.wipe(&bytes)
            throw .sourceDamaged(file: file, why: "\(what): \(name) says \(count) bytes, but only \(filled) remain (the file is truncated or damaged)")
        }
        return bytes
    }

    /// What is wrong with the compressed stream past what was read, if anything: inflated to its
    /// end (and dropped) once a reader of the payload found something wrong, so that damage of
    /// the stream is named before what a reader made of damaged bytes.
    func damageAhead() -> VaultError? {
        guard let inflater else { return nil }
        do { try inflater.drain() } catch { return damage(error) }
        return nil
    }

    private func damage(_ error: VaultError) -> VaultError {
        if case .malformedInput(let why) = error { return .sourceDamaged(file: file, why: why) }
        return error
    }
}
