import CSQLite
import Foundation
import ObjectGraph

// Steps run as one (docs/engine.md, "Steps run as one"): an inferred step that only
// renames is not run on its own; the step beside it reads or writes the renamed version
// directly, in one pass, with the same rows.
extension StoreMigrator {
    /// Steps run as one mapping: renaming steps, one step whose mapping runs, renaming
    /// steps.
    struct FusedRun {
        /// Every step the pass runs for, in order.
        let steps: [Step]
        /// The renaming steps before the step whose mapping runs, and after it.
        let leading: [Relabeling], trailing: [Relabeling]
        /// The step's mapping, composed with the renamings: from the first step's source
        /// version to the last step's destination.
        let mapping: MappingModel
        let manager: MigrationManager
        /// Whether the first renaming step's source is checked before the pass
        /// (``Relabeling/copiesExactly(_:)``): a store from elsewhere, or one whose decimals
        /// or UUIDs a renaming carries (``Relabeling/carriesParsedValues``).
        let checksSource: Bool
        /// What the steps before the one whose mapping runs compute, as the pass reads it
        /// from its source: checked before the pass (``Relabeling/computesExactly(_:in:functions:)``).
        let computed: [Relabeling.ComputedValue]
        /// What the step whose mapping runs makes of the entities the step after it filters,
        /// which the pass makes only some of: counted over its source beside the pass
        /// (``Relabeling/count(_:in:)``), in terms of that source.
        let middleCounts: [Relabeling.MiddleCount]
        /// Why the step after the last one could not join the pass; nil after the chain's
        /// last step.
        let stop: Relabeling.Refusal?
        /// Per entity mapping of the step whose mapping runs: the to-ones it would set to
        /// nil object by object, from a relationship a renaming before it adds, which the
        /// pass leaves unset (as they would end) and counts as the step would: once for
        /// each object it makes (``Relabeling/composeBefore(_:destination:policies:)``).
        let unsetToOnes: [String: Int]

        /// The step whose mapping runs.
        var base: Step { steps[leading.count] }
    }

    /// The passes `steps` run in: each the steps run as one, or one step. A pass whose
    /// renaming steps come before the step whose mapping runs is run so only when the store
    /// holds nothing they would convert (the run finds out; else they run on their own).
    public func passes(of steps: [Step]) -> [Pass] {
        var passes: [Pass] = []
        var index = 0
        let fusing = fusesSteps && options.pushdown
        while index < steps.count {
            let run = fusing ? fusedRun(from: index, of: steps, leading: true) : nil
            let count = run?.steps.count ?? 1
            let renamings = (run?.leading ?? []) + [nil] + (run?.trailing ?? [])
            let base = index + (run?.leading.count ?? 0)
            /// The renaming steps of the pass (those before its base step only, where
            /// `before`; after it only, where `after`) that `has` says of, by index.
            func marked(before: Bool = false, after: Bool = false, _ has: (Relabeling) -> Bool) -> [Int] {
                renamings.indices.filter { i in
                    renamings[i].map(has) == true && (!before || index + i < base) && (!after || index + i > base)
                }.map { index + $0 }
            }
            let dropping = marked { !$0.dropped.isEmpty }
            let computing = marked { !$0.computed.isEmpty }
            // (Those after it are put in key order as the pass writes them.)
            let ordering = marked(before: true) { $0.ordersItsOwnWay }
            let linking = marked(before: true) { !$0.computedLinks.isEmpty }
            let filtering = marked(after: true) { !$0.filters.isEmpty }
            var pass = Pass(
                steps: index..<(index + count), base: base, dropping: dropping, computing: computing,
                inKeyOrder: ordering, linking: linking, filtering: filtering)
            if fusing, let previous = passes.last { pass.apart = apart(previous, of: steps) }
            passes.append(pass)
            index += count
        }
        return passes
    }

    /// The one mapping a pass of several steps runs (`pass`, of ``passes(of:)`` over
    /// `steps`): the step whose mapping runs, composed with the steps it reads through
    /// and writes through, from the pass's first source version to its last destination.
    /// Nil for a pass of one step.
    public func mapping(of pass: Pass, in steps: [Step]) -> MappingModel? {
        guard pass.steps.count > 1, fusesSteps, options.pushdown,
            let run = fusedRun(from: pass.steps.lowerBound, of: steps, leading: true),
            run.steps.count == pass.steps.count
        else { return nil }
        return run.mapping
    }

    /// Why the step after `previous` could not run in its pass (``Pass/apart``).
    private func apart(_ previous: Pass, of steps: [Step]) -> Pass.Apart {
        let last = previous.steps.upperBound - 1
        // After it: the pass found again, which says where it stopped.
        var after: String
        do {
            let leading = try steps[previous.steps.lowerBound..<previous.base].map {
                step throws(Relabeling.Refusal) in try Relabeling(step, computingWith: policies.functions)
            }
            after = try fusedRun(from: previous.steps.lowerBound, after: leading, of: steps).stop?.description ?? ""
        } catch {
            after = error.description
        }
        // Before it: the last step read through by the pass that starts after it.
        var before: String?
        if last == previous.base {
            do {
                let relabeling = try Relabeling(steps[last], computingWith: policies.functions)
                _ = try fusedRun(from: last, after: [relabeling], of: steps)
                before = "the pass before it takes as many steps as it can with this one in it"
            } catch {
                before = error.description
            }
        }
        return Pass.Apart(after: after, before: before)
    }

    /// Steps run in one pass (``passes(of:)``).
    public struct Pass: Sendable, Hashable {
        /// The indexes of its steps.
        public let steps: Range<Int>
        /// The step whose mapping runs; the others only rename.
        public let base: Int
        /// The renaming steps that also drop properties (which the steps after them do
        /// not read, and the step before them, if any, writes without fail).
        public var dropping: [Int] = []
        /// The steps that compute values the steps after them read as their expressions
        /// (docs/engine.md, "Steps that compute"), before ``base``.
        public var computing: [Int] = []
        /// The renaming steps that put an ordered to-many's members in key order, which
        /// the run checks the store holds already (docs/engine.md, "Steps run as one").
        public var inKeyOrder: [Int] = []
        /// The renaming steps that link relationships through chains no step after them
        /// reads, which the run checks every key of names a row (docs/engine.md, "Steps
        /// run as one").
        public var linking: [Int] = []
        /// The step right after ``base`` where it copies only some rows of an entity (its
        /// fetch filters), which the pass fetches with ``base``'s, counting and checking
        /// what that step makes of the rows the filter leaves behind (docs/engine.md,
        /// "Steps that filter").
        public var filtering: [Int] = []
        /// Why its first step does not run in the pass before (nil for the first pass, or
        /// where steps are not run as one).
        public var apart: Apart?

        /// Why a pass's first step does not run in the pass before.
        public struct Apart: Sendable, Hashable {
            /// Why it cannot be written by the pass before, after its last step.
            public let after: String
            /// Why that last step cannot be read through by this pass, before its first
            /// step; nil where the last step only follows the step whose mapping runs.
            public let before: String?
        }
    }

    /// The pass that runs `steps[first]` and the steps after it it can take; nil when it
    /// would run one step. When `leading`, the renaming steps from `first` on may be
    /// absorbed into the step after them: of the passes with each number of them (from
    /// all the renaming steps in a row to none), the one that takes the most steps, and
    /// of those the one with the most renamings before. (A renaming step is a step too:
    /// where the step after it cannot read through it, it may run its own mapping, with
    /// the renamings before it.)
    func fusedRun(from first: Int, of steps: [Step], leading: Bool) -> FusedRun? {
        // The steps before, absorbed (they may compute values, which the step after reads
        // as their expressions; docs/engine.md, "Steps that compute").
        var relabelings: [Relabeling] = []
        while leading, first + relabelings.count + 1 < steps.count,
            let relabeling = try? Relabeling(steps[first + relabelings.count], computingWith: policies.functions)
        {
            relabelings.append(relabeling)
        }
        var best: FusedRun?
        for count in stride(from: relabelings.count, through: 0, by: -1) {
            guard let run = try? fusedRun(from: first, after: Array(relabelings.prefix(count)), of: steps) else {
                continue
            }
            if run.steps.count > best?.steps.count ?? 1 { best = run }
        }
        return best
    }

    /// The pass that runs the step after the renaming steps `relabelings` (from `first`
    /// on), with them before it, and the steps after it it can take; throws why it cannot
    /// be run so, or would run one step.
    private func fusedRun(from first: Int, after relabelings: [Relabeling], of steps: [Step])
        throws(Relabeling.Refusal) -> FusedRun
    {
        let base = first + relabelings.count
        var mapping = steps[base].mapping
        var trailing: [Relabeling] = []
        var end = base + 1
        // What the steps after compute from what the base step writes must be written as
        // it is read back (checked over the base step's source).
        var checks: [Relabeling.ComputedValue] = []
        var counts: [Relabeling.MiddleCount] = []
        var stop: Relabeling.Refusal?
        while end < steps.count {
            do throws(Relabeling.Refusal) {
                let relabeling = try Relabeling(steps[end], computingWith: policies.functions)
                // (The steps between would count the rows it leaves behind.)
                if let entity = relabeling.filters.keys.sorted().first, !trailing.isEmpty {
                    throw Relabeling.Refusal(
                        "it copies only the rows of \(entity) its filter selects, which only the step right after the one whose mapping runs may"
                    )
                }
                let composed = try relabeling.compose(mapping, source: steps[base].source, policies: policies)
                mapping = composed.mapping
                checks += composed.checks
                counts += composed.counts
                trailing.append(relabeling)
                end += 1
            } catch {
                stop = error
                break
            }
        }
        var unsetToOnes: [String: Int] = [:]
        for relabeling in relabelings.reversed() {
            let composed = try relabeling.composeBefore(
                mapping, destination: steps[end - 1].destination, policies: policies)
            mapping = composed.mapping
            unsetToOnes.merge(composed.unsetToOnes, uniquingKeysWith: +)
        }
        let before = relabelings
        // What each step before computes, read from the pass's source, must translate
        // there (else the pass would never pass its check).
        var computed: [Relabeling.ComputedValue] = []
        let unread = Relabeling.Refusal("what the steps compute cannot be read through the renamings before them")
        for i in before.indices {
            guard let values = before[i].computedValues(after: before[..<i]) else { throw unread }
            computed += values
        }
        guard let after = Relabeling.readBack(checks, through: before[...]) else { throw unread }
        computed += after
        guard let middleCounts = Relabeling.readBack(counts, through: before[...]) else {
            throw Relabeling.Refusal("what the step after it filters cannot be counted through the renamings before it")
        }
        guard
            Relabeling.translates(computed, in: StoreLayout(model: steps[first].source), functions: policies.functions)
        else { throw Relabeling.Refusal("what the steps compute cannot be checked in SQL over the pass's source") }
        guard end - first > 1 else { throw stop ?? Relabeling.Refusal("it is the chain's last step") }
        let manager: MigrationManager
        do {
            manager = try MigrationManager(
                mapping: mapping, source: steps[first].source, destination: steps[end - 1].destination,
                policies: policies, options: options)
        } catch {
            throw Relabeling.Refusal("the steps' mappings, composed, do not make one mapping that runs: \(error)")
        }
        let wellTyped = Self.readsAStoreTheRunWrote(steps, at: first)
        manager.sourceIsWellTyped = wellTyped
        return FusedRun(
            steps: Array(steps[first..<end]), leading: before, trailing: trailing, mapping: mapping,
            manager: manager,
            checksSource: !before.isEmpty && (!wellTyped || before.contains(where: \.carriesParsedValues)),
            computed: computed, middleCounts: middleCounts, stop: stop, unsetToOnes: unsetToOnes)
    }

    /// Runs `run`, the `pass`th, into a new file that then takes the store's place: one report per step,
    /// or nil when it did not run (nothing changed): the source holds what the first
    /// renaming step would convert or refuse, or the pass failed. A cancellation is
    /// thrown.
    func run(_ run: FusedRun, pass: Int, storeAt path: String, progress: ((Step, MigrationProgress) -> Void)?)
        throws(MigrationError) -> [StepReport]?
    {
        let first = run.steps[0], last = run.steps[run.steps.count - 1]
        let step = Step(
            source: first.source, destination: last.destination, mapping: run.mapping, isInferred: first.isInferred)
        /// The steps whose rows the pass writes under other names, and whether that step
        /// is done (its rows checked, as its validation would check them).
        func done(_ steps: ArraySlice<Step>) {
            for step in steps {
                progress?(
                    step,
                    MigrationProgress(
                        fraction: 1, stage: .validate, entityMapping: "", rows: 0, totalRows: nil, rowsPerSecond: 0))
            }
        }
        var before: [MigrationReport] = []
        var after: [MigrationReport] = []
        // What the step whose mapping runs makes where the step after it filters, by
        // entity mapping.
        var made: [String: Int] = [:]
        // The renaming steps before: their source checked, and their reports counted, on a
        // thread of their own beside the pass, which waits for them before its file takes
        // the store's place.
        let check = run.leading.isEmpty && run.computed.isEmpty && run.middleCounts.isEmpty ? nil : SourceCheck()
        defer { check?.finish() }
        var report: MigrationReport
        do {
            report = try self.run(step, run.manager, storeAt: path) {
                progress?(run.base, $1)
            } reading: { () throws(MigrationError) in
                guard let check else { return }
                // (Opened here, where the store's files are as the pass reads them.)
                let store: Store
                do {
                    store = try Store.open(at: path, model: first.source, mode: .readOnly)
                } catch {
                    throw MigrationError(.sourceStore, "cannot read the store for the steps run as one: \(error)")
                }
                check.start { () throws -> SourceCheck.Found in
                    if run.checksSource, try !run.leading[0].copiesExactly(store) { throw Refused() }
                    if try !Relabeling.computesExactly(run.computed, in: store, functions: policies.functions) {
                        throw Refused()
                    }
                    for i in run.leading.indices where run.leading[i].ordersItsOwnWay {
                        let locate = run.leading[i].locateBefore(run.leading[..<i])
                        if try !run.leading[i].holdsInKeyOrder(in: store.database, layout: store.layout, locate: locate)
                        {
                            throw Refused()
                        }
                    }
                    for i in run.leading.indices where !run.leading[i].computedLinks.isEmpty {
                        let locate = run.leading[i].locateBefore(run.leading[..<i])
                        if try !run.leading[i].linksResolve(in: store.database, layout: store.layout, locate: locate) {
                            throw Refused()
                        }
                    }
                    guard let counts = try Relabeling.count(run.middleCounts, in: store) else { throw Refused() }
                    let reports = try run.leading.indices.map { i in
                        // (The first renaming's source is this store; a later one's rows
                        // are its, under its names.)
                        try run.leading[i].report(
                            in: store.database, layout: store.layout,
                            locate: run.leading[i].locateBefore(run.leading[..<i]),
                            chain: run.leading[i].chainBefore(run.leading[..<i]))
                    }
                    return SourceCheck.Found(reports: reports, counts: counts)
                }
            } written: { temporary throws(MigrationError) in
                if let check {
                    switch check.finish() {
                    case .success(let found)?:
                        before = found.reports
                        made = found.counts
                    default:
                        throw MigrationError(
                            .sourceStore,
                            "the store holds what \(first.source.version) → \(first.destination.version) converts")
                    }
                    done(run.steps[..<run.leading.count])
                }
                do {
                    // (Opened to write only where a step after gives an ordered to-many's
                    // members positions: in key order, or 1, 2, 3… in their order.)
                    let ordering = run.trailing.contains(where: \.givesPositions)
                    let store = try Store.open(
                        at: temporary, model: last.destination, mode: ordering ? .readWrite : .readOnly)
                    for i in run.trailing.indices {
                        try run.trailing[i].givePositions(
                            in: store.database, layout: store.layout,
                            locate: run.trailing[i].locateAfter(run.trailing[(i + 1)...]))
                    }
                    after = try run.trailing.indices.map { i throws(SQLiteError) in
                        try run.trailing[i].report(
                            in: store.database, layout: store.layout, written: true,
                            locate: run.trailing[i].locateAfter(run.trailing[(i + 1)...]))
                    }
                } catch {
                    throw MigrationError(
                        .destinationStore, "cannot count the rows of the steps run as one: \(error)", underlying: error)
                }
            }
        } catch  where error.kind == .cancelled || Self.isOfTheMachine(error) {
            throw error
        } catch {
            return nil
        }
        done(run.steps[(run.leading.count + 1)...])
        for i in report.entityMappings.indices {
            if let unset = run.unsetToOnes[report.entityMappings[i].name] {
                report.entityMappings[i].relationshipsSet += unset * report.entityMappings[i].destinationInstances
            }
            // (Each of them makes one object of each row it fetches, linked to nothing.)
            if let count = made[report.entityMappings[i].name] {
                report.entityMappings[i].sourceInstances = count
                report.entityMappings[i].destinationInstances = count
            }
        }
        let reports = before + [report] + after
        return zip(run.steps, reports).enumerated().map { index, pair in
            StepReport(
                source: pair.0.source.version, destination: pair.0.destination.version, report: pair.1,
                isFused: index != run.leading.count, pass: pass)
        }
    }

    /// The source holds what the first renaming step would convert or refuse.
    private struct Refused: Error {}

    /// Work on a thread of its own, and its outcome once it is done.
    final class SourceCheck: @unchecked Sendable {
        /// What the check found: the reports of the renaming steps before the step whose
        /// mapping runs, and what that step makes where the step after it filters.
        struct Found {
            var reports: [MigrationReport]
            var counts: [String: Int]
        }

        private var outcome: Result<Found, any Error>?
        /// Its own store and the steps it reads, touched by its thread alone until done.
        private var work: (() throws -> Found)?
        private var thread: Thread?
        private let done = DispatchSemaphore(value: 0)

        func start(_ work: @escaping () throws -> Found) {
            self.work = work
            let thread = Thread { [self] in
                outcome = Result { try self.work!() }
                self.work = nil
                done.signal()
            }
            self.thread = thread
            thread.start()
        }

        /// Waits for the work, if it was started: its outcome (again, once waited for).
        @discardableResult
        func finish() -> Result<Found, any Error>? {
            if thread != nil {
                done.wait()
                thread = nil
            }
            return outcome
        }
    }

    /// Whether `error` is of the machine, not of the store's rows or the mappings: a file
    /// that cannot be read, written, synced, locked or put in place, a full disk, no
    /// memory. The steps one by one would meet it too; the pass reports it as it is,
    /// where a failure of the rows is left to the steps to report, each in its own terms.
    static func isOfTheMachine(_ error: MigrationError) -> Bool {
        if let sqlite = error.sqlite {
            return [
                SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_BUSY, SQLITE_LOCKED, SQLITE_NOMEM,
                SQLITE_READONLY, SQLITE_PROTOCOL, SQLITE_NOTADB, SQLITE_CORRUPT
            ].contains(sqlite.code & 0xFF)
        }
        return error.kind == .destinationStore && error.entityMapping == nil && error.expression == nil
    }
}
