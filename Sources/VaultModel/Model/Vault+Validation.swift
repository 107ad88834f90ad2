// MARK: - What a put checks

extension Vault {
    /// Checks what `put(_:as:now:)` checks before it looks at the vault, in its order (name, value,
    /// field count, then each field's name and value), and returns the name's bytes.
    package static func validate(_ entry: Entry, as name: String) throws(VaultError) -> [UInt8] {
        let key = try EntryName.validate(name)
        try Self.checkValueLength(entry.value.count, what: "the value of '\(name)'")
        guard entry.fields.count <= VaultLimits.maxFieldsPerEntry else {
            throw .limitExceeded("an entry holds at most \(VaultLimits.maxFieldsPerEntry) fields")
        }
        for (field, value) in entry.fields {
            try EntryName.validateField(field)
            try Self.checkValueLength(value.count, what: "field '\(field)' of '\(name)'")
        }
        return key
    }

    /// Whether `validate(_:as:)` passes for `entry` under the name whose bytes are `name`, without
    /// copying anything: the fast check of imports (`EntryName.isValid(utf8:)`, `isValidField`);
    /// `VaultModelTests.test_isValidPut_agreesWithValidate` ties the two.
    package static func isValidPut(_ entry: Entry, name: UnsafeRawBufferPointer) -> Bool {
        guard EntryName.isValid(utf8: name), entry.value.count <= VaultLimits.maxValueLength,
              entry.fields.count <= VaultLimits.maxFieldsPerEntry else { return false }
        for (field, value) in entry.fields {
            guard value.count <= VaultLimits.maxValueLength else { return false }
            var field = field
            guard field.withUTF8({ EntryName.isValidField(UnsafeRawBufferPointer($0)) }) else { return false }
        }
        return true
    }

    /// `what` is built only for the error: every put of an import used to format it.
    static func checkValueLength(_ length: Int, what: @autoclosure () -> String) throws(VaultError) {
        guard length <= VaultLimits.maxValueLength else {
            throw .limitExceeded("\(what()) is \(length) bytes; the limit is \(VaultLimits.maxValueLength) bytes (256 MiB)")
        }
    }
}
