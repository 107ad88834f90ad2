import FoundationEssentials
import SecureMemory
import VaultModel

extension KeePassXMLParser {
    // MARK: Groups and entries

    mutating func readGroup(path: [KeePassGroup], _ entry: EntryBody) throws(VaultError) {
        var group = KeePassGroup()
        var contentSeen = false
        // `path + [group]` and its folders, made once for the group's entries and again only when the group changes.
        var groups: [KeePassGroup]?
        var folders: [String] = []
        func inside(isRecycleBin: Bool) -> [KeePassGroup] {
            if isRecycleBin != group.isRecycleBin { (group.isRecycleBin, groups) = (isRecycleBin, nil) }
            if let groups { return groups }
            let made = path + [group]
            groups = made
            folders = made.dropFirst().map(\.name)
            return made
        }
        try children { (parser, name) throws(VaultError) in
            if parser.reader.matches(name, "Name") {
                // Folders are named as the entries are read: a name after them would come too late.
                guard !contentSeen else { throw .malformedInput("line \(parser.reader.line): a group's Name after its entries or groups") }
                group.name = try parser.text("Name")
                groups = nil
            } else if parser.reader.matches(name, "UUID") {
                group.uuid = try parser.trimmedText("UUID")
                groups = nil
            } else if parser.reader.matches(name, "Notes") {
                group.notes = try parser.text("Notes")
                groups = nil
            } else if parser.reader.matches(name, "Entry") {
                contentSeen = true
                let enclosing = inside(isRecycleBin: parser.isRecycleBin(group, depth: path.count))
                var read = try parser.readEntry(inHistory: false)
                try entry(&read, enclosing, folders)
            } else if parser.reader.matches(name, "Group") {
                contentSeen = true
                try parser.readGroup(path: inside(isRecycleBin: parser.isRecycleBin(group, depth: path.count)), entry)
            } else {
                try parser.reader.skipElement()
            }
        }
    }

    /// Whether `group`, `depth` groups deep (1: right under the root group), is the recycle bin
    /// (`KeePassGroup.isRecycleBin`). Meta comes before Root, as KeePass and KeePassXC write it.
    func isRecycleBin(_ group: KeePassGroup, depth: Int) -> Bool {
        if let bin = meta.recycleBin { return group.uuid == bin }
        return meta.recycleBinEnabled && depth == 1 && group.name == "Recycle Bin"
    }

    mutating func readEntry(inHistory: Bool) throws(VaultError) -> KeePassEntry {
        var entry = KeePassEntry()
        try children { (parser, name) throws(VaultError) in
            if parser.reader.matches(name, "String") {
                // Room for an entry's usual strings at once (Title, UserName, Password, URL, Notes).
                if entry.strings.isEmpty { entry.strings.reserveCapacity(5) }
                entry.strings.append(try parser.readString())
            } else if parser.reader.matches(name, "UUID") {
                entry.uuid = try parser.trimmedText("UUID")
            } else if parser.reader.matches(name, "Times") {
                entry.times = try parser.readTimes()
            } else if parser.reader.matches(name, "Binary") {
                entry.attachments.append(try parser.readAttachment())
            } else if parser.reader.matches(name, "Tags") {
                entry.tags = try parser.text("Tags")
            } else if parser.reader.matches(name, "IconID") {
                if !(try parser.reader.withText("IconID", KeePassText.isEmptyOrZero)) { entry.hasIcon = true }
            } else if parser.reader.matches(name, "CustomIconUUID") {
                entry.hasIcon = true
                try parser.reader.skipElement()
            } else if parser.reader.matches(name, "ForegroundColor") || parser.reader.matches(name, "BackgroundColor") {
                if !(try parser.reader.withText("Color") { KeePassText.trimmed($0).isEmpty }) { entry.hasColors = true }
            } else if parser.reader.matches(name, "OverrideURL") {
                entry.overrideURL = try parser.text("OverrideURL")
            } else if parser.reader.matches(name, "AutoType") {
                entry.hasAutoTypeSettings = try parser.readAutoType()
            } else if parser.reader.matches(name, "CustomData") {
                try parser.children { (parser, _) throws(VaultError) in entry.customDataItems += 1; try parser.reader.skipElement() }
            } else if parser.reader.matches(name, "History") {
                guard !inHistory else { throw .malformedInput("line \(parser.reader.line): a history inside a history entry") }
                try parser.children { (parser, name) throws(VaultError) in
                    guard parser.reader.matches(name, "Entry") else { try parser.reader.skipElement(); return }
                    entry.history.append(try parser.readEntry(inHistory: true))
                }
            } else if parser.reader.matches(name, "QualityCheck") {
                if !parser.isTrue(try parser.text("QualityCheck")) { entry.otherElements.insert("QualityCheck") }
            } else {
                // Named in the loss warning: a handful per entry at most in real files; a hostile
                // file's many names are bounded by the reader (KeePassXMLReader.maxOtherElementNames).
                if entry.otherElements.count < KeePassEntry.maxOtherElements { entry.otherElements.insert(parser.reader.text(of: name)) }
                try parser.reader.skipElement()
            }
        }
        return entry
    }

    /// `<String><Key>…</Key><Value ProtectInMemory="True">…</Value></String>`.
    mutating func readString() throws(VaultError) -> KeePassString {
        let place = reader.place()
        var key: String?, kind = KeePassKey.other, value: [UInt8]?, protected = false
        // The usual shape first, without events: `<Key>` with plain text, then `<Value>` (plain
        // text read the same way; with attributes, its start tag read as the walk reads it). The
        // walk below then reads what follows, as it would have read these.
        if let text = reader.textElement("Key") {
            (key, kind) = reader.withBytes(text, Self.key)
            // `<Value>` or `<Value ProtectInMemory="True">`: protected as `readValue` finds it.
            if let read = reader.textElement("Value", trueAttribute: "ProtectInMemory") {
                (value, protected) = (reader.withBytes(read.text) { Array($0) }, read.attribute)
            } else if try reader.start("Value") {
                (value, protected) = try readValue(key: key, at: place)
            }
            // `</String>` at once: what the walk below would read first, and end with.
            if let key, reader.end() { return KeePassString(key: key, kind: kind, value: value ?? [], protected: protected) }
        }
        try children { (parser, name) throws(VaultError) in
            if parser.reader.matches(name, "Key") {
                (key, kind) = try parser.reader.withText("Key", Self.key)
            } else if parser.reader.matches(name, "Value") {
                (value, protected) = try parser.readValue(key: key, at: place)
            } else {
                try parser.reader.skipElement()
            }
        }
        guard let key else { throw .malformedInput("line \(reader.line(at: place)): a String without a Key") }
        return KeePassString(key: key, kind: kind, value: value ?? [], protected: protected)
    }

    /// A string's key and its kind: the standard keys are literals (no string made, no UTF-8
    /// checked again), the kind told from the bytes.
    static func key(_ bytes: UnsafeBufferPointer<UInt8>) -> (String, KeePassKey) {
        if let known = KeePassKey.known(bytes) { return known }
        let made = String(decoding: bytes, as: UTF8.self)
        return (made, KeePassKey(bytes: bytes) ?? KeePassKey(made))
    }

    /// A string's `Value`, its start tag just read: the bytes (a KDBX's protected value undone)
    /// and whether the value is protected; `place` names the string in messages.
    mutating func readValue(key: String?, at place: XMLReader.Place) throws(VaultError) -> ([UInt8], Bool) {
        let inMemory = try attributeIsTrue("ProtectInMemory")
        let streamed = try attributeIsTrue("Protected")
        var bytes = try reader.withText("Value") { Array($0) }
        if streamed {
            let line = reader.line(at: place)
            bytes = try base64(bytes, at: line, what: "a protected value")
            try unprotectValue(&bytes, at: line, what: "the value of '\(key ?? "?")'")
        }
        return (bytes, inMemory || streamed)
    }

    /// `<Binary><Key>name</Key><Value Ref="0"/></Binary>`, or the bytes inline in base64.
    mutating func readAttachment() throws(VaultError) -> KeePassAttachment {
        let line = reader.markLine()
        var key: String?, reference: Int?, bytes: [UInt8] = []
        try children { (parser, name) throws(VaultError) in
            if parser.reader.matches(name, "Key") {
                key = try parser.text("Key")
            } else if parser.reader.matches(name, "Value") {
                if let ref = try parser.reader.attribute("Ref") {
                    guard let id = Int(String(decoding: ref, as: UTF8.self)), id >= 0 else {
                        throw .malformedInput("line \(line): an attachment's Ref is not a number")
                    }
                    reference = id
                    try parser.reader.skipElement()
                } else {
                    let streamed = try parser.attributeIsTrue("Protected")
                    bytes = try parser.base64(try parser.reader.readText("Value"), at: line, what: "an attachment")
                    if streamed { try parser.unprotectValue(&bytes, at: line, what: "an attachment") }
                }
            } else {
                try parser.reader.skipElement()
            }
        }
        guard let key else { throw .malformedInput("line \(line): an attachment without a Key (its file name)") }
        return KeePassAttachment(name: key, reference: reference, bytes: bytes)
    }

    mutating func readTimes() throws(VaultError) -> KeePassTimes {
        var times = KeePassTimes()
        // The two times every writer puts first, read without events when their text is plain;
        // the walk below reads the rest, as it would have read these.
        while true {
            if let text = reader.textElement("LastModificationTime") { times.modified = try time(at: text); continue }
            if let text = reader.textElement("CreationTime") { times.created = try time(at: text); continue }
            break
        }
        if reader.end() { return times }
        try children { (parser, name) throws(VaultError) in
            let line = parser.reader.place()
            if parser.reader.matches(name, "CreationTime") { times.created = try parser.readTime("CreationTime", at: line) }
            else if parser.reader.matches(name, "LastModificationTime") { times.modified = try parser.readTime("LastModificationTime", at: line) }
            else if parser.reader.matches(name, "ExpiryTime") { times.expiry = try parser.readTime("ExpiryTime", at: line) }
            else if parser.reader.matches(name, "Expires") { times.expires = parser.isTrue(try parser.text("Expires")) }
            else if parser.reader.matches(name, "UsageCount") {
                if !(try parser.reader.withText("UsageCount", KeePassText.isEmptyOrZero)) { times.hasUsage = true }
            } else if parser.reader.matches(name, "LastAccessTime") || parser.reader.matches(name, "LocationChanged") {
                if !(try parser.reader.withText("time") { KeePassText.trimmed($0).isEmpty }) { times.hasUsage = true }
            } else {
                try parser.reader.skipElement()
            }
        }
        return times
    }

    /// Whether an `AutoType` element says more than KeePass's default (enabled, no own sequence, no associations).
    mutating func readAutoType() throws(VaultError) -> Bool {
        var special = false
        try children { (parser, name) throws(VaultError) in
            // Every element's text is read (a short-circuit would leave it unread and the walk out of step).
            if parser.reader.matches(name, "Enabled") { if !parser.isTrue(try parser.text("Enabled")) { special = true } }
            else if parser.reader.matches(name, "DataTransferObfuscation") { if !(try parser.reader.withText("Obfuscation", KeePassText.isEmptyOrZero)) { special = true } }
            else if parser.reader.matches(name, "DefaultSequence") { if !(try parser.text("DefaultSequence")).isEmpty { special = true } }
            else { special = true; try parser.reader.skipElement() }
        }
        return special
    }
}
