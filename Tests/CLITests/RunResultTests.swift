import ExpressionLanguage
import Remodel
@testable import RemodelCLI
import Testing

/// `run --json`'s `error` object.
@Suite struct RunResultTests {
    @Test func aFailureThatBeganInSQLiteCarriesSQLitesCodesAndStatement() {
        let sqlite = SQLiteError(
            code: 19, extendedCode: 1811, message: "no A2 here", sql: "INSERT INTO ZORDER (Z_PK) VALUES (?)")
        let error = MigrationError(
            .destinationStore, "cannot write a Order: \(sqlite)", entityMapping: "OrderToOrder",
            sourceEntity: "Order", sourceKey: 2, underlying: ContextError(sqlite))
        let json = RunResult.json(of: error, message: error.description)
        #expect(json["kind"] == "destinationStore")
        #expect(json["code"] == .integer(134160))
        #expect(
            json["message"]?.stringValue?.hasPrefix(#"entity mapping "OrderToOrder", source Order Z_PK 2: "#) == true)
        #expect(
            json["sqlite"] == [
                "code": 19, "extendedCode": 1811, "message": "no A2 here", "sql": "INSERT INTO ZORDER (Z_PK) VALUES (?)"
            ])
    }

    @Test func otherFailuresHaveNoSQLiteMember() {
        let error = MigrationError(
            .expression, "cannot multiply a string by a number",
            underlying: ExpressionError(.type, "cannot multiply a string by a number"))
        #expect(RunResult.json(of: error, message: error.description)["sqlite"] == nil)
    }
}
