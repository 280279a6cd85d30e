extension ControlValue {
    private enum CodingKeys: String, CodingKey {
        case integer, integer64, boolean, menu, bitmask, string, payload
    }

    /// Decodes `{"integer": 5}`, `{"menu": 1}`, `{"string": "text"}`, `{"payload": [1, 2]}` and the like.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let key = container.allKeys.first, container.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: "a control value has exactly one kind key"))
        }
        switch key {
        case .integer: self = .integer(try container.decode(Int32.self, forKey: key))
        case .integer64: self = .integer64(try container.decode(Int64.self, forKey: key))
        case .boolean: self = .boolean(try container.decode(Bool.self, forKey: key))
        case .menu: self = .menu(try container.decode(Int32.self, forKey: key))
        case .bitmask: self = .bitmask(try container.decode(UInt32.self, forKey: key))
        case .string: self = .string(try container.decode(String.self, forKey: key))
        case .payload: self = .payload(try container.decode([UInt8].self, forKey: key))
        }
    }

    /// Encodes one key naming the kind, with the value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .integer(let value): try container.encode(value, forKey: .integer)
        case .integer64(let value): try container.encode(value, forKey: .integer64)
        case .boolean(let value): try container.encode(value, forKey: .boolean)
        case .menu(let value): try container.encode(value, forKey: .menu)
        case .bitmask(let value): try container.encode(value, forKey: .bitmask)
        case .string(let value): try container.encode(value, forKey: .string)
        case .payload(let value): try container.encode(value, forKey: .payload)
        }
    }
}
