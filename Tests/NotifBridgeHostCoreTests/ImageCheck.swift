import Foundation

/// Checks that bytes really are an image of the declared uniform type: the magic bytes, and for
/// PNG every chunk's length and CRC, an IHDR first with a non-empty size, IDAT data and IEND last.
enum ImageCheck {
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    static let jpegStart: [UInt8] = [0xFF, 0xD8, 0xFF]
    static let jpegEnd: [UInt8] = [0xFF, 0xD9]

    /// nil when `data` is a well-formed `type`; otherwise what is wrong.
    static func problem(_ data: Data, type: String) -> String? {
        let bytes = [UInt8](data)
        switch type {
        case "public.png": return pngProblem(bytes)
        case "public.jpeg":
            guard bytes.starts(with: jpegStart), bytes.suffix(2).elementsEqual(jpegEnd) else { return "not a JPEG (no SOI/EOI markers)" }
            return nil
        default: return "no check for uniform type \"\(type)\""
        }
    }

    private static func pngProblem(_ bytes: [UInt8]) -> String? {
        guard bytes.starts(with: pngSignature) else { return "not a PNG (no signature)" }
        var offset = pngSignature.count
        var chunkTypes: [String] = []
        while offset < bytes.count {
            guard offset + 12 <= bytes.count else { return "chunk header cut short at byte \(offset)" }
            let length = Int(bigEndian32(bytes, at: offset))
            guard offset + 12 + length <= bytes.count else { return "chunk at byte \(offset) overruns the file" }
            let typeAndData = bytes[(offset + 4)..<(offset + 8 + length)]
            let type = String(decoding: typeAndData.prefix(4), as: UTF8.self)
            guard crc32(typeAndData) == bigEndian32(bytes, at: offset + 8 + length) else { return "\(type) chunk has a bad CRC" }
            if type == "IHDR" {
                guard length == 13, bigEndian32(bytes, at: offset + 8) > 0, bigEndian32(bytes, at: offset + 12) > 0 else { return "IHDR is malformed" }
            }
            chunkTypes.append(type)
            offset += 12 + length
        }
        guard chunkTypes.first == "IHDR" else { return "first chunk is not IHDR" }
        guard chunkTypes.contains("IDAT") else { return "no IDAT chunk" }
        guard chunkTypes.last == "IEND" else { return "last chunk is not IEND" }
        return nil
    }

    private static func bigEndian32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// CRC-32 (ISO-HDLC), as PNG uses it.
    private static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
