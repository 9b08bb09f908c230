import RemodelCLI
import Testing

/// Multi-line input: backslashes, open brackets, open quotes.
@Suite struct InputAccumulatorTests {
    /// Feeds `lines`; returns the inputs completed, and whether a line is still pending.
    func feed(_ lines: [String]) -> (inputs: [InputAccumulator.Input], pending: Bool) {
        var accumulator = InputAccumulator()
        var inputs: [InputAccumulator.Input] = []
        for line in lines { inputs += accumulator.add(line) }
        return (inputs, !accumulator.isEmpty)
    }

    func input(_ text: String, _ history: String? = nil) -> InputAccumulator.Input {
        InputAccumulator.Input(text: text, historyEntry: history ?? text)
    }

    @Test func oneLine() {
        #expect(feed(["1 + 2"]).inputs == [input("1 + 2")])
        #expect(feed([""]).inputs == [input("")])
    }

    @Test func backslashContinues() {
        #expect(feed(["1 + \\", "2"]).inputs == [input("1 + \n2", "1 + 2")])
        #expect(feed(["1 + \\  ", "2 \\", "+ 3"]).inputs == [input("1 + \n2 \n+ 3", "1 + 2 + 3")])
        #expect(feed(["1 + \\"]).pending)
    }

    @Test func openBracketsContinue() {
        #expect(
            feed(["SUBQUERY(books, $b,", "  $b.price > 10)"]).inputs
                == [input("SUBQUERY(books, $b,\n  $b.price > 10)", "SUBQUERY(books, $b, $b.price > 10)")])
        #expect(feed(["{1,", "[2", "]}"]).inputs == [input("{1,\n[2\n]}", "{1, [2 ]}")])
        #expect(feed(["(1 +", "2"]).pending)
        // More closers than openers is complete: the parser reports it.
        #expect(feed(["1)"]).inputs == [input("1)")])
    }

    @Test func openQuotesContinue() {
        // A line break inside a string is part of it, so history keeps it.
        #expect(feed(["'multi", "line'"]).inputs == [input("'multi\nline'")])
        // Brackets inside strings do not count; escaped quotes do not close.
        #expect(feed(["'(' + \"[\""]).inputs == [input("'(' + \"[\"")])
        #expect(feed(["'it\\'s", "'"]).inputs == [input("'it\\'s\n'")])
    }

    @Test func commandsWithExpressionsOrJSONContinue() {
        #expect(feed([":let x = {", "\"a\": 1}"]).inputs == [input(":let x = {\n\"a\": 1}", ":let x = { \"a\": 1}")])
        #expect(feed([":print (1 +", "2)"]).inputs == [input(":print (1 +\n2)", ":print (1 + 2)")])
        // :load takes one line, so an apostrophe in a file name is fine.
        #expect(feed([":load Ada's.json"]).inputs == [input(":load Ada's.json")])
        #expect(feed([":load x \\"]).inputs == [input(":load x \\")])
    }

    @Test func aCommandEndsAPendingInput() {
        #expect(feed(["(1 +", ":vars"]).inputs == [input("(1 +"), input(":vars")])
        // Not inside a string, where it is text.
        #expect(feed(["'a", ":vars'"]).inputs == [input("'a\n:vars'")])
    }

    @Test func finishReturnsAnIncompleteInput() {
        var accumulator = InputAccumulator()
        #expect(accumulator.add("(1 +") == [])
        #expect(accumulator.finish() == input("(1 +"))
        #expect(accumulator.finish() == nil)
        #expect(accumulator.add("(2") == [])
        accumulator.discard()
        #expect(accumulator.isEmpty)
    }
}
