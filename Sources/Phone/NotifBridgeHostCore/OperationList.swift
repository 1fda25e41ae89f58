import Foundation

extension HostOperation {
    /// Decodes what `phone forward --file` reads and the fixture corpus holds: a JSON array of
    /// operations, dates in ISO 8601 and files in base64.
    public static func list(fromJSON data: Data) throws -> [HostOperation] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode([HostOperation].self, from: data)
    }
}
