import ExpressionLanguage

/// The example object of `mapping-eval --example` and `:example`: a person with a name, an
/// age, a birthday, an address and some books. The same text is in
/// mappings/examples/person.json (a test keeps the two equal).
public enum ExampleObject {
    /// The JSON text, in the encoding of DESIGN.md ("Values").
    public static let json = """
        {
          "name": "Ada Lovelace",
          "age": 36,
          "birthday": {"$date": "1815-12-10T00:00:00Z"},
          "address": {
            "street": "12 St James's Square",
            "city": "London",
            "country": "GB"
          },
          "books": [
            {"title": "Sketch of the Analytical Engine", "price": 12.5},
            {"title": "Notes on Bernoulli Numbers", "price": 8.75},
            {"title": "Poetical Science", "price": 21.0}
          ]
        }
        """

    /// The example as a value (a dictionary).
    public static var value: Value {
        // The text is a constant that a test parses: failing here is a programmer error.
        try! Value(json: JSON.parse(json))
    }
}
