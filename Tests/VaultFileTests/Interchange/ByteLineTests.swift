import Testing
@testable import VaultInterchange

/// `ByteLine`, the line the renaming lines of an import are made in.
@Suite struct ByteLineTests {
    @Test func test_append_keepsEveryByteInOrderPastItsRoom() {
        var line = ByteLine(capacity: 16)
        var expected: [UInt8] = []
        for round in 0..<200 {
            switch round % 5 {
            case 0:
                line.append("ab")
                expected += Array("ab".utf8)
            case 1:
                line.append(contentsOf: "caf\u{e9} \(round)")
                expected += Array("caf\u{e9} \(round)".utf8)
            case 2:
                line.append(UInt8(round & 0x7F))
                expected.append(UInt8(round & 0x7F))
            case 3:
                let bytes = [UInt8](repeating: UInt8(round & 0xFF), count: round)
                line.append(bytes)
                expected += bytes
            default:
                line.append(UnsafeRawBufferPointer(start: nil, count: 0))
            }
        }
        #expect(line.count == expected.count)
        #expect(Array(line.bytes) == expected)
    }

    @Test func test_truncate_keepsThePrefixAndRemoveAllTheRoom() {
        var line = ByteLine(capacity: 4)
        line.append(contentsOf: "vaultfile: renamed 'x'")
        line.truncate(to: 10)
        #expect(Array(line.bytes) == Array("vaultfile:".utf8))
        line.append(" y")
        #expect(Array(line.bytes) == Array("vaultfile: y".utf8))
        line.removeAll()
        #expect(line.count == 0 && line.bytes.isEmpty)
        line.append("z")
        #expect(Array(line.bytes) == [UInt8(ascii: "z")])
    }
}
