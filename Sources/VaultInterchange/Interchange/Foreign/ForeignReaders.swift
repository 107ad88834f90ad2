import VaultModel

// MARK: - The readers of other managers' exports

extension Interchange {
    /// What a peer's export holds, read by its format's reader (`ForeignImport`: items and what
    /// could not be kept), the two older readers (keepassxc-csv, bitwarden-json) included; throws
    /// for vaultfile's own formats.
    public static func readForeign(_ bytes: [UInt8], format: InterchangeFormat, now: Int64) throws(VaultError) -> ForeignImport {
        switch format {
        case .keepassXML: return try KeePassXMLReader.read(bytes, now: now)
        case .bitwardenCSV: return try BitwardenCSVReader.read(bytes, now: now)
        case .onePasswordCSV: return try OnePasswordCSVReader.read(bytes, now: now)
        case .onePUX: return try OnePUXReader.read(bytes, now: now)
        case .lastPassCSV: return try LastPassCSVReader.read(bytes, now: now)
        case .chromeCSV: return try ChromeCSVReader.read(bytes, now: now)
        case .firefoxCSV: return try FirefoxCSVReader.read(bytes, now: now)
        case .dashlaneCSV: return try DashlaneCSVReader.read(bytes, now: now)
        case .enpassJSON: return try EnpassJSONReader.read(bytes, now: now)
        case .keepassxcCSV: return try KeePassXCCSV.read(bytes, now: now)
        case .bitwardenJSON: return try BitwardenJSON.read(bytes, now: now)
        case .json, .dotenv, .csv:
            throw .malformedInput("\(format.rawValue) is read by Interchange.read, not as another manager's export")
        case .ansibleVault, .sops, .kdbx:
            throw .malformedInput("--format \(format.rawValue) is read by 'vaultfile import', which runs age or asks for the file's password")
        }
    }
}
