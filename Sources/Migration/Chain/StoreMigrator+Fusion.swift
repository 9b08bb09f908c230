import ObjectGraph

// Steps run as one (docs/engine.md, "Steps run as one"): an inferred step that only
// renames what the step before it wrote is not run; that step's mapping writes its version
// directly, in one pass, with the same rows.
extension StoreMigrator {
    /// A step and the relabelings after it, run as one mapping.
    struct FusedRun {
        /// The step, then the steps it runs for.
        let steps: [Step]
        let relabelings: [Relabeling]
        /// The step's mapping, composed with the relabelings: its source version to the last.
        let manager: MigrationManager
        let mapping: MappingModel
    }

    /// The runs of several steps in `steps`, by the index of their first step.
    func fusedRuns(of steps: [Step]) -> [Int: FusedRun] {
        var runs: [Int: FusedRun] = [:]
        var first = 0
        while first < steps.count {
            var mapping = steps[first].mapping
            var relabelings: [Relabeling] = []
            var next = first + 1
            while next < steps.count, let relabeling = Relabeling(steps[next]),
                let composed = relabeling.compose(mapping, source: steps[first].source, policies: policies)
            {
                mapping = composed
                relabelings.append(relabeling)
                next += 1
            }
            if !relabelings.isEmpty,
                let manager = try? MigrationManager(
                    mapping: mapping, source: steps[first].source, destination: steps[next - 1].destination,
                    policies: policies, options: options)
            {
                manager.sourceIsWellTyped = Self.readsAStoreTheRunWrote(steps, at: first)
                runs[first] = FusedRun(
                    steps: Array(steps[first..<next]), relabelings: relabelings, manager: manager, mapping: mapping)
            }
            first = next
        }
        return runs
    }

    /// Runs `run` into a new file that then takes the store's place: one report per step,
    /// or nil when it failed (nothing changed), for the steps to run one by one. A
    /// cancellation is thrown.
    func run(_ run: FusedRun, storeAt path: String, progress: ((Step, MigrationProgress) -> Void)?)
        throws(MigrationError) -> [StepReport]?
    {
        let first = run.steps[0], last = run.steps[run.steps.count - 1]
        let step = Step(
            source: first.source, destination: last.destination, mapping: run.mapping, isInferred: first.isInferred)
        var absorbed: [MigrationReport] = []
        let report: MigrationReport
        do {
            report = try self.run(step, run.manager, storeAt: path) {
                progress?(first, $1)
            } written: {
                temporary throws(MigrationError) in
                do {
                    let store = try Store.open(at: temporary, model: last.destination, mode: .readOnly)
                    absorbed = try run.relabelings.indices.map { i throws(SQLiteError) in
                        try run.relabelings[i].report(
                            in: store.database, layout: store.layout, later: run.relabelings[(i + 1)...])
                    }
                } catch {
                    throw MigrationError(
                        .destinationStore, "cannot count the rows of the steps run as one: \(error)", underlying: error)
                }
            }
        } catch  where error.kind == .cancelled {
            throw error
        } catch {
            return nil
        }
        // The steps the pass ran for are done, their rows validated with the last version's.
        for step in run.steps.dropFirst() {
            progress?(
                step,
                MigrationProgress(
                    fraction: 1, stage: .validate, entityMapping: "", rows: 0, totalRows: nil, rowsPerSecond: 0))
        }
        return [StepReport(source: first.source.version, destination: first.destination.version, report: report)]
            + zip(run.steps.dropFirst(), absorbed).map { step, report in
                StepReport(
                    source: step.source.version, destination: step.destination.version, report: report, isFused: true)
            }
    }
}
