import ExpressionLanguage

/// An object's attribute values by slot (nil: not read yet), in memory the object owns:
/// allocated with the object and freed with it.
///
/// An array did the same job, but making one and freeing one for every object went through
/// the runtime's generic array code (metadata lookup, capacity query, a destroy that asks
/// `Value`'s witnesses about every element), which cost an insert through objects about a
/// thousand instructions. Not copyable, so the values can only be the object's.
struct SlotValues: ~Copyable {
    private let base: UnsafeMutablePointer<Value?>
    let count: Int

    /// `count` values not read yet.
    init(unread count: Int) {
        base = .allocate(capacity: Swift.max(count, 1))
        base.initialize(repeating: Value?.none, count: count)
        self.count = count
    }

    /// A copy of `values`.
    init(copying values: [Value?]) {
        count = values.count
        base = .allocate(capacity: Swift.max(count, 1))
        for i in values.indices { (base + i).initialize(to: values[i]) }
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    var indices: Range<Int> { 0..<count }

    /// Whether the value in `slot` was read or set as null (a value not read yet is not).
    /// A pattern match in place, without copying the value out or comparing it.
    func isNull(_ slot: Int) -> Bool {
        precondition(slot >= 0 && slot < count, "slot out of range")
        if case .null? = base[slot] { return true }
        return false
    }

    /// The value in `slot`, which must be one of ``indices``.
    subscript(slot: Int) -> Value? {
        @inline(__always) get {
            precondition(slot >= 0 && slot < count, "slot out of range")
            return base[slot]
        }
        @inline(__always) nonmutating set {
            precondition(slot >= 0 && slot < count, "slot out of range")
            base[slot] = newValue
        }
    }
}
