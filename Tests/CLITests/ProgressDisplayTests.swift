import Foundation
import Remodel
@testable import RemodelCLI
import Testing

/// What `run` shows of its progress: the bar on a terminal, plain lines elsewhere, JSON
/// lines with --json; fed with progress reports and a clock of the test's own.
@Suite struct ProgressDisplayTests {
    static let models = (1...3).map { ObjectModel(version: "V\($0)", entities: []) }
    static let steps = [
        StoreMigrator.Step(
            source: models[0], destination: models[1],
            mapping: MappingModel(sourceModel: "V1", destinationModel: "V2", entityMappings: [])),
        StoreMigrator.Step(
            source: models[1], destination: models[2],
            mapping: MappingModel(sourceModel: "V2", destinationModel: "V3", entityMappings: []))
    ]

    final class Recorder {
        var text = ""
        var time = 0.0
    }

    func display(_ style: ProgressDisplay.Style) -> (ProgressDisplay, Recorder) {
        let recorder = Recorder()
        let display = ProgressDisplay(
            style: style, steps: Self.steps, write: { recorder.text += $0 }, now: { recorder.time })
        return (display, recorder)
    }

    static func progress(
        _ stage: MigrationProgress.Stage, _ mapping: String, rows: Int, total: Int?, rate: Double = 0,
        fraction: Double
    ) -> MigrationProgress {
        MigrationProgress(
            fraction: fraction, stage: stage, entityMapping: mapping, rows: rows, totalRows: total, rowsPerSecond: rate)
    }

    /// A step of one entity mapping over 102,400 rows: a report every 0.125 s of the
    /// test's clock for 3 s, then the end of each stage.
    func feed(_ display: ProgressDisplay, _ recorder: Recorder, step: Int = 1) {
        let s = Self.steps[step]
        for i in 1...24 {
            recorder.time += 0.125
            display.update(
                s,
                Self.progress(
                    .createInstances, "ItemToItem", rows: i * 4096, total: 102_400, rate: 10_240,
                    fraction: Double(i * 4096) / 102_400 / 3))
        }
        display.update(
            s, Self.progress(.createInstances, "ItemToItem", rows: 102_400, total: 102_400, fraction: 1.0 / 3))
        display.update(s, Self.progress(.createRelationships, "ItemToItem", rows: 0, total: 0, fraction: 2.0 / 3))
        display.update(s, Self.progress(.validate, "ItemToItem", rows: 0, total: nil, fraction: 1))
    }

    @Test func plainLinesAreFew() {
        let (display, recorder) = display(.lines)
        feed(display, recorder)
        display.finish()
        #expect(
            recorder.text == """
                [2/2] V2 → V3: ItemToItem: create instances: 4,096/102,400 rows (4%), 10,240 rows/s, ETA 10s
                [2/2] V2 → V3: ItemToItem: create instances: 36,864/102,400 rows (36%), 10,240 rows/s, ETA 7s
                [2/2] V2 → V3: ItemToItem: create instances: 69,632/102,400 rows (68%), 10,240 rows/s, ETA 4s
                [2/2] V2 → V3: ItemToItem: create instances: 102,400 rows, done
                [2/2] V2 → V3: validated

                """)
    }

    @Test func theBarIsRedrawnInPlace() {
        let (display, recorder) = display(.bar(width: 120))
        recorder.time = 1
        display.update(
            Self.steps[1],
            Self.progress(
                .createInstances, "ItemToItem", rows: 48_128, total: 102_400, rate: 51_200, fraction: 0.47 / 3))
        #expect(
            recorder.text
                == "\r[2/2] ██████░░░░░░  57%  V2 → V3  ItemToItem  create instances  48,128/102,400 rows  51,200 rows/s  ETA 2s\u{1B}[K"
        )
        recorder.text = ""
        display.finish()
        #expect(recorder.text == "\r\u{1B}[K")
        recorder.text = ""
        display.finish()
        #expect(recorder.text == "")
    }

    /// On a narrow terminal the rows and the ETA stay; the versions and the stage go first.
    @Test func theBarFitsItsWidth() {
        let progress = Self.progress(
            .createInstances, "ItemToItem", rows: 48_128, total: 102_400, rate: 51_200, fraction: 0.47 / 3)
        let lines = [80, 60, 40, 20].map {
            ProgressDisplay.bar(index: 1, count: 2, step: Self.steps[1], progress, width: $0)
        }
        #expect(
            lines == [
                "[2/2] ██████░░░░░░  57%  ItemToItem  48,128/102,400 rows  51,200 rows/s  ETA 2s",
                "[2/2] ██████░░░░░░  57%  48,128/102,400 rows  ETA 2s",
                "[2/2] ██████░░░░░░  57%",
                "[2/2] ██████░░░░░░  "
            ])
        for (line, width) in zip(lines, [80, 60, 40, 20]) { #expect(line.count <= width) }
    }

    @Test func jsonEventsAtMostFourASecond() throws {
        let (display, recorder) = display(.json)
        feed(display, recorder, step: 0)
        let events = try recorder.text.split(separator: "\n").map { try JSON.parse(Data($0.utf8)) }
        // 3 s of reports every 0.125 s: one every 0.25 s at most, then the three ends.
        #expect(events.count == 12 + 3)
        #expect(
            events.first == [
                "event": "progress", "step": 1, "steps": 2, "source": "V1", "destination": "V2",
                "entityMapping": "ItemToItem",
                "stage": "create instances", "rows": 4096, "totalRows": 102_400, "rowsPerSecond": 10_240.0,
                "etaSeconds": 9.6,
                "fraction": 0.0133, "overallFraction": 0.0067, "done": false
            ])
        #expect(events.suffix(3).map { $0["stage"] } == ["create instances", "create relationships", "validate"])
        #expect(events.suffix(3).allSatisfy { $0["done"] == true })
        #expect(events.last?["overallFraction"] == 0.5)
    }

    @Test func numbersAndDurations() {
        #expect(
            [0, 999, 1000, 1_234_567, -4200].map(ProgressDisplay.grouped) == [
                "0", "999", "1,000", "1,234,567", "-4,200"
            ])
        #expect([0.2, 59, 61, 3599, 3661].map(ProgressDisplay.duration) == ["1s", "59s", "1m01s", "59m59s", "1h01m"])
    }
}
