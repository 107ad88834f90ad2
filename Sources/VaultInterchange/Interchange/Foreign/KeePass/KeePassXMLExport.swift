import SecureMemory
import VaultModel

// MARK: - export --format keepass-xml

/// `export --format keepass-xml`: KeePass 2's XML file, as KeePass's "KeePass XML (2.x)" export
/// writes it and `keepassxc-cli import` and KeePass's XML import read it. The same writer as the
/// XML inside `export --format kdbx` (`KeePassXMLWriter`, form `.xmlFile`): folders are groups,
/// value/username/url/notes/title the standard strings, extra URLs `KP2A_URL*`, totp KeePassXC's
/// `otp`, other fields protected strings, attachments in Meta/Binaries, tags, expiry, times
/// (to the second) and history. Protected values are in the clear, as in any XML export.
public enum KeePassXMLExport {
    /// The document and what it could not carry as it is.
    public struct Written {
        /// The XML (every secret in the clear: the caller writes, then wipes it).
        public var bytes: [UInt8]
        /// Entries written (history versions not counted).
        public var entries: Int
        /// Earlier versions written into the entries' histories.
        public var versions: Int
        /// What was written otherwise than it is in the vault, or not at all.
        public var losses: [ExportLoss]
    }

    /// The entries of `vault` under `prefix` as a KeePass 2 XML document.
    public static func write(_ vault: Vault, prefix: String, now: Int64 = currentTimeMilliseconds()) throws(VaultError) -> Written {
        var writer = KeePassXMLWriter(form: .xmlFile)
        do { try writer.write(vault, prefix: prefix, now: now) } catch { writer.wipe(); throw error }
        let bytes = writer.takeXML()
        var tally = KeePassXMLWriter.losses(of: writer, format: "KeePass XML")
        tally.addTrash(of: vault, prefix: prefix, format: "KeePass XML")
        let written = Written(bytes: bytes, entries: writer.entries, versions: writer.versions, losses: tally.losses)
        writer.wipe()  // the attachments' pool; the XML is the caller's now
        return written
    }
}

extension KeePassXMLWriter {
    /// What `writer` wrote otherwise than the vault holds it (both KeePass forms).
    static func losses(of writer: KeePassXMLWriter, format: String) -> ExportLossTally {
        var tally = ExportLossTally()
        let tags = writer.tagsAsAttachment
        tally.add("binary_as_attachment", writer.binaryAsAttachment) {
            "\(ExportLossTally.counted($0, "value or field is", "values or fields are")) not text (binary data) and written as "
                + "attachments of their entries (a value as 'value.bin'\(tags > 0 ? ", tags as 'tags'" : "")), which \(format) shows among the attachments"
        }
        tally.add("renamed", writer.renamed) {
            "\(ExportLossTally.counted($0, "field or attachment was", "fields or attachments were")) written as 'NAME (2)', 'NAME (3)'… "
                + "because another of the same entry already had their KeePass name (KeePass holds each name once per entry)"
        }
        tally.add("label_replaced", writer.labelsReplaced) {
            "\(ExportLossTally.counted($0, "field label holds", "field labels hold")) characters XML cannot (control characters, U+FFFE, "
                + "U+FFFF) and \($0 == 1 ? "was" : "were") written under the fields' own names"
        }
        return tally
    }
}
