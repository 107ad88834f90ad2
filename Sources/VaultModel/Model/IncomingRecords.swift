// MARK: - Records a seal takes from outside the vault's plaintext

/// New records in name order that a seal writes after reading them from elsewhere than the
/// vault's own plaintext (an import too large for one buffer: its sorted runs, encrypted in a
/// temporary file, `RecordRuns` in VaultFormat). The seal's third source, beside stored records and
/// edited entries (`EntryCodec.encode`): their number and total length are known before the first
/// chunk is sealed, and the records are read only as the seal writes them.
///
/// The seam between the model (which knows no cipher) and the runs' encryption.
package protocol IncomingRecords: AnyObject, Sendable {
    /// The number of records.
    var count: Int { get }
    /// The length of the records, back to back.
    var length: Int { get }
    /// Calls `body` with each record in name order (no name twice); throws when one cannot be
    /// read back as it was written (an I/O error, a run file changed meanwhile).
    func forEachRecord(_ body: (UnsafeRawBufferPointer) -> Void) throws(VaultError)
}
