import Foundation
import ObjectGraph
#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The objects of an Xcode mapping model's `xcmapping.xml`, which is itself a Core Data
/// XML store: `<object type="XDDEVENTITYMAPPING" id="z104">` elements with `<attribute>`
/// and `<relationship idrefs="…">` children, in no particular order.
struct XcodeMappingDocument {
    /// One `<object>`.
    struct Object {
        var type: String
        var id: String
        /// The line of its `<object>` tag, for messages.
        var line: Int
        /// Attribute values by name, as written (binary ones are base64 text).
        var attributes: [String: String] = [:]
        /// Relationship targets by name: the ids in `idrefs`.
        var relationships: [String: [String]] = [:]

        func string(_ name: String) -> String? {
            attributes[name].flatMap { $0.isEmpty ? nil : $0 }
        }

        /// Where the object is, for messages: `line 52, XDDEVENTITYMAPPING z104`.
        var place: String { "line \(line), \(type) \(id)" }
    }

    var objects: [String: Object] = [:]
    /// The ids in document order.
    var order: [String] = []

    /// The objects of `type`, in document order.
    func objects(ofType type: String) -> [Object] {
        order.compactMap { objects[$0] }.filter { $0.type == type }
    }

    /// The objects a relationship of `object` points to, in `idrefs` order.
    func targets(of object: Object, _ relationship: String) -> [Object] {
        (object.relationships[relationship] ?? []).compactMap { objects[$0] }
    }

    /// Parses `data`; a message (with the line) when it is not an Xcode mapping model.
    init(data: Data) throws(MappingDocumentError) {
        let delegate = Delegate()
        if let problem = XMLInput.parse(data, with: delegate) {
            throw MappingDocumentError(line: problem.line, message: problem.message)
        }
        guard delegate.sawDatabase else {
            throw MappingDocumentError(line: nil, message: "not an Xcode mapping model: no <database> element")
        }
        objects = delegate.objects
        order = delegate.order
    }

    private final class Delegate: XMLInput.Reader {
        var objects: [String: Object] = [:]
        var order: [String] = []
        var sawDatabase = false
        private var current: Object?
        private var attributeName: String?
        private var text = ""

        override func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes a: [String: String] = [:]
        ) {
            switch name {
            case "database":
                sawDatabase = true
            case "object":
                current = Object(type: a["type"] ?? "", id: a["id"] ?? "", line: parser.lineNumber)
            case "attribute" where current != nil:
                attributeName = a["name"]
                text = ""
            case "relationship" where current != nil:
                if let relationship = a["name"] {
                    current?.relationships[relationship] = (a["idrefs"] ?? "").split(separator: " ").map(String.init)
                }
            default:
                break
            }
        }

        override func parser(_ parser: XMLParser, foundCharacters string: String) {
            if attributeName != nil { text += string }
        }

        override func parser(
            _ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?
        ) {
            switch name {
            case "attribute":
                if let attributeName { current?.attributes[attributeName] = text }
                attributeName = nil
            case "object":
                if let current, !current.id.isEmpty, objects[current.id] == nil {
                    objects[current.id] = current
                    order.append(current.id)
                }
                current = nil
            default:
                break
            }
        }
    }
}

/// Why an `xcmapping.xml` could not be read at all.
struct MappingDocumentError: Error {
    var line: Int?
    var message: String
}
