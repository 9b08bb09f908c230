import Foundation
import RemodelCLI
import Testing

/// `mapping-eval --jsonl`: one request line in, one response line out, exactly.
@Suite struct JSONLProtocolTests {
    /// (request line, response line); a nil response means the line is skipped.
    static let cases: [(String, String?)] = [
        // Values of every kind.
        (#"{"expression": "1 + 2"}"#, #"{"value":3,"type":"integer"}"#),
        (#"{"expression": "1.0"}"#, #"{"value":1.0,"type":"double"}"#),
        (#"{"expression": "5 / 2.0"}"#, #"{"value":2.5,"type":"double"}"#),
        (#"{"expression": "CAST('1.50', 'NSDecimalNumber')"}"#, #"{"value":1.5,"type":"decimal"}"#),
        (
            #"{"expression": "'a' + 'b'"}"#,
            #"{"error":{"kind":"type","message":"'+' needs numbers, not a string (\"a\"); convert with CAST(x, 'NSNumber')","line":1,"column":1}}"#
        ),
        (#"{"expression": "FUNCTION('a', 'stringByAppendingString:', 'é')"}"#, #"{"value":"aé","type":"string"}"#),
        (#"{"expression": "nil"}"#, #"{"value":null,"type":"null"}"#),
        (#"{"expression": "TRUE"}"#, #"{"value":true,"type":"boolean"}"#),
        (#"{"expression": "CAST(0, 'NSDate')"}"#, #"{"value":{"$date":"2001-01-01T00:00:00Z"},"type":"date"}"#),
        (#"{"expression": "$d", "variables": {"d": {"$data": "AQID"}}}"#, #"{"value":{"$data":"AQID"},"type":"data"}"#),
        (
            #"{"expression": "$s", "variables": {"s": {"$set": [1, "a", 1]}}}"#,
            #"{"value":{"$set":[1,"a"]},"type":"set"}"#
        ),
        (#"{"expression": "{1, 'a', {2.5}}"}"#, #"{"value":[1,"a",[2.5]],"type":"array"}"#),
        (
            #"{"expression": "SELF", "object": {"b": [1, 2.5], "a": {"$date": "2001-01-01T01:00:00+01:00"}}}"#,
            #"{"value":{"a":{"$date":"2001-01-01T00:00:00Z"},"b":[1,2.5]},"type":"dictionary"}"#
        ),
        // Predicates.
        (#"{"predicate": "age > 18", "object": {"age": 36}}"#, #"{"value":true,"type":"boolean"}"#),
        (
            #"{"predicate": "ANY books.price > 20", "object": {"books": [{"price": 8}, {"price": 21.5}]}}"#,
            #"{"value":true,"type":"boolean"}"#
        ),
        (
            #"{"predicate": "name LIKE[c] %@", "object": {"name": "Ada"}, "arguments": ["a*"]}"#,
            #"{"value":true,"type":"boolean"}"#
        ),
        (
            #"{"predicate": "1 + 2"}"#,
            #"{"error":{"kind":"syntax","message":"expected a comparison operator (==, <, IN, LIKE, …) to make a predicate, near end of input","line":1,"column":6}}"#
        ),
        (
            #"{"expression": "a == 1"}"#,
            #"{"error":{"kind":"syntax","message":"unexpected '==' after a complete expression, near '=='","line":1,"column":3}}"#
        ),
        // Variables, $source, format arguments; nothing persists between requests.
        (
            #"{"expression": "$rate * $source.price", "object": {"price": 10}, "variables": {"rate": 1.5}}"#,
            #"{"value":15.0,"type":"double"}"#
        ),
        (#"{"expression": "%K + %d", "object": {"n": 1}, "arguments": ["n", 2]}"#, #"{"value":3,"type":"integer"}"#),
        (#"{"expression": "$x := 1"}"#, #"{"value":1,"type":"integer"}"#),
        (
            #"{"expression": "$x"}"#,
            #"{"error":{"kind":"unboundVariable","message":"$x has no value; bind it before evaluating","line":1,"column":1}}"#
        ),
        // Errors in the expression, with line and column.
        (
            #"{"expression": "1 +\n  * 2"}"#,
            #"{"error":{"kind":"syntax","message":"expected an expression, near '*'","line":2,"column":3}}"#
        ),
        (
            #"{"expression": "1/0"}"#,
            #"{"error":{"kind":"divisionByZero","message":"integer division by zero (1 / 0); divide by a double (1 / 0.0) for IEEE infinity","line":1,"column":1}}"#
        ),
        (
            #"{"expression": "foo(1)"}"#,
            #"{"error":{"kind":"unknownFunction","message":"unknown function 'foo'; the built-in functions are listed in docs/language.md, and methods are called with FUNCTION(target, 'selector:', …), near 'foo'","line":1,"column":1}}"#
        ),
        (
            #"{"expression": "%@ + %@", "arguments": [1]}"#,
            #"{"error":{"kind":"formatArgument","message":"%@ has no argument (1 given); pass one argument per format specifier, near '%@'","line":1,"column":6}}"#
        ),
        (
            #"{"expression": "9223372036854775807 + 1"}"#,
            #"{"error":{"kind":"overflow","message":"integer overflow in 9223372036854775807 + 1; use a double operand (such as 9223372036854775807.0) for floating-point arithmetic","line":1,"column":1}}"#
        ),
        (
            #"{"predicate": "'abc' MATCHES '('"}"#,
            #"{"error":{"kind":"regex","message":"invalid regular expression '(': missing closing parenthesis at pattern offset 1","line":1,"column":15}}"#
        ),
        // Printed forms instead of values: canonical, or as Apple's Foundation prints.
        (#"{"expression": "a + b * 2", "print": "apple"}"#, #"{"printed":"a + (b * 2)"}"#),
        (#"{"predicate": "isMale == YES", "print": "apple"}"#, #"{"printed":"isMale == 1"}"#),
        (#"{"predicate": "isMale == YES", "print": "canonical"}"#, #"{"printed":"isMale == TRUE"}"#),
        (#"{"expression": "%@ * 2", "arguments": [1.0], "print": "apple"}"#, #"{"printed":"1 * 2"}"#),
        (
            #"{"expression": "1 +", "print": "apple"}"#,
            #"{"error":{"kind":"syntax","message":"expected an expression, near end of input","line":1,"column":4}}"#
        ),
        (
            #"{"expression": "1", "print": "fancy"}"#,
            #"{"error":{"kind":"request","message":"\"print\" must be \"canonical\" or \"apple\", not \"fancy\"","line":null,"column":null}}"#
        ),
        // Malformed requests.
        (
            #"{"expression": "1",}"#,
            #"{"error":{"kind":"request","message":"invalid JSON: trailing comma before '}'","line":1,"column":19}}"#
        ),
        (
            #"{"expression": "1""#,
            #"{"error":{"kind":"request","message":"invalid JSON: expected ',' or '}' to close '{' at 1:1, found end of input","line":1,"column":19}}"#
        ),
        (
            "garbage",
            #"{"error":{"kind":"request","message":"invalid JSON: expected a value, found 'garbage'","line":1,"column":1}}"#
        ),
        (
            "[1]",
            #"{"error":{"kind":"request","message":"a request is a JSON object, such as {\"expression\": \"1 + 2\"}, not an array","line":null,"column":null}}"#
        ),
        (
            "{}",
            #"{"error":{"kind":"request","message":"a request needs \"expression\" or \"predicate\"","line":null,"column":null}}"#
        ),
        (
            #"{"expression": "1", "predicate": "TRUEPREDICATE"}"#,
            #"{"error":{"kind":"request","message":"a request has \"expression\" or \"predicate\", not both","line":null,"column":null}}"#
        ),
        (
            #"{"expresion": "1"}"#,
            #"{"error":{"kind":"request","message":"unknown member \"expresion\"; a request has \"expression\" or \"predicate\", and may have \"object\", \"variables\", \"arguments\" and \"print\"","line":null,"column":null}}"#
        ),
        (
            #"{"expression": 5}"#,
            #"{"error":{"kind":"request","message":"\"expression\" must be a string, not an integer","line":null,"column":null}}"#
        ),
        (
            #"{"predicate": null}"#,
            #"{"error":{"kind":"request","message":"\"predicate\" must be a string, not null","line":null,"column":null}}"#
        ),
        (
            #"{"expression": "x", "object": {"$date": 5}}"#,
            #"{"error":{"kind":"request","message":"\"object\": \"$date\" expects an ISO 8601 date-time string such as \"2001-01-01T00:00:00Z\", not 5","line":null,"column":null}}"#
        ),
        (
            #"{"expression": "x", "variables": {"a": {"b": {"$set": 1}}}}"#,
            #"{"error":{"kind":"request","message":"\"variables\".a.b: \"$set\" expects an array, not 1","line":null,"column":null}}"#
        ),
        (
            #"{"expression": "x", "variables": [1]}"#,
            #"{"error":{"kind":"request","message":"\"variables\" must be an object of names and values, not an array","line":null,"column":null}}"#
        ),
        (
            #"{"expression": "x", "arguments": "x"}"#,
            #"{"error":{"kind":"request","message":"\"arguments\" must be an array, not a string","line":null,"column":null}}"#
        ),
        (
            #"{"expression": "x", "arguments": [1, {"$data": "!!"}]}"#,
            #"{"error":{"kind":"request","message":"\"arguments\"[1]: \"$data\" expects a base64 string, not \"!!\" (invalid base64)","line":null,"column":null}}"#
        ),
        // Blank lines are skipped; spaces and a CR around a request are fine.
        ("", nil),
        ("  \t", nil),
        ("  {\"expression\": \"2\"}  \r", #"{"value":2,"type":"integer"}"#)
    ]

    @Test func responses() {
        let handler = JSONLProtocol()
        for (request, response) in Self.cases {
            #expect(handler.response(to: Array(request.utf8)) == response, "\(request)")
        }
    }

    @Test func invalidUTF8IsARequestError() {
        let line: [UInt8] = Array(#"{"expression": ""#.utf8) + [0xFF] + Array(#""}"#.utf8)
        #expect(
            JSONLProtocol().response(to: line)
                == #"{"error":{"kind":"request","message":"invalid JSON: invalid UTF-8 byte 0xFF in string","line":1,"column":17}}"#
        )
    }

    /// A store object, as the object graph will provide.
    final class Book: KeyValueCoding {
        func value(forKey key: String) throws -> Value {
            guard key == "title" else { throw ExpressionError(.unknownKey, "Book has no key '\(key)'") }
            return "Dune"
        }
        var objectDescription: String { "Book/9" }
    }

    @Test func defaultsFromTheCommandLine() {
        let handler = JSONLProtocol(
            object: .object(ObjectReference(Book())), variables: ["rate": 2], arguments: ["title"])
        #expect(
            handler.response(to: Array(#"{"expression": "SELF"}"#.utf8))
                == #"{"value":{"$object":"Book/9"},"type":"object"}"#)
        #expect(handler.response(to: Array(#"{"expression": "%K"}"#.utf8)) == #"{"value":"Dune","type":"string"}"#)
        #expect(
            handler.response(to: Array(#"{"expression": "$source.title"}"#.utf8))
                == #"{"value":"Dune","type":"string"}"#)
        // A request's variables are added to the defaults; its object and arguments replace them.
        #expect(
            handler.response(to: Array(#"{"expression": "$rate * $n", "variables": {"n": 3}}"#.utf8))
                == #"{"value":6,"type":"integer"}"#)
        #expect(
            handler.response(to: Array(#"{"expression": "%@", "object": 1, "arguments": [5]}"#.utf8))
                == #"{"value":5,"type":"integer"}"#)
        #expect(
            handler.response(to: Array(#"{"expression": "SELF.nope"}"#.utf8))
                == #"{"error":{"kind":"unknownKey","message":"Book has no key 'nope'","line":1,"column":1}}"#)
    }

    /// The same table through the binary: one process answers every line, in order.
    @Test func binary() throws {
        let input = Self.cases.map(\.0).joined(separator: "\n") + "\n"
        let expected = Self.cases.compactMap(\.1).map { $0 + "\n" }.joined()
        let result = try MappingEvalProcess.run(["--jsonl"], stdin: input)
        #expect(result == .init(status: 0, stdout: expected, stderr: ""))
    }

    @Test func binaryDefaultsAndOddInput() throws {
        let result = try MappingEvalProcess.run(
            ["--jsonl", "--example", "--var", "x=2"],
            stdin: "{\"expression\": \"age * $x\"}\n\u{0}\n{\"expression\": \"name\"}")
        #expect(
            result
                == .init(
                    status: 0,
                    stdout: """
                        {"value":72,"type":"integer"}
                        {"error":{"kind":"request","message":"invalid JSON: expected a value, found control character U+0000","line":1,"column":1}}
                        {"value":"Ada Lovelace","type":"string"}

                        """, stderr: ""))
        #expect(try MappingEvalProcess.run(["--jsonl"], stdin: "") == .init(status: 0, stdout: "", stderr: ""))
    }

    /// Programs drive the protocol interactively: each answer arrives before the next request.
    @Test func answersEachLineBeforeTheNext() throws {
        let executable = try #require(MappingEvalProcess.executable, "mapping-eval was not built")
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--jsonl"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        for n in 1...3 {
            input.fileHandleForWriting.write(Data("{\"expression\": \"\(n) * 2\"}\n".utf8))
            var line = Data()
            while !line.contains(0x0A) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                line.append(chunk)
            }
            #expect(String(decoding: line, as: UTF8.self) == "{\"value\":\(n * 2),\"type\":\"integer\"}\n")
        }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }
}
