import ExpressionLanguage

extension ObjectModel {
    /// Every problem in the model: duplicate or invalid names, names that would share a
    /// store table or column, unknown parents or destinations, inverses that do not point
    /// back, inheritance cycles, defaults or bounds that do not fit their attribute's type,
    /// bad counts, stored attributes of a type Remodel cannot store, constraints, fetched
    /// properties and configurations that name what is not there.
    ///
    /// Names follow what Core Data refuses, not Xcode's conventions: an entity or property
    /// name may start with either case (`Box` is a valid relationship name), as long as it
    /// is ASCII letters, digits and `_` not starting with a digit (it becomes a SQL
    /// identifier) and not reserved.
    public func validationErrors(file: String? = nil) -> [ModelError] {
        var errors: [ModelError] = []
        func fail(_ path: String, _ message: String) {
            errors.append(ModelError(.invalid, file: file, path: path, message: message))
        }
        let names = entities.map(\.name)
        let known = names.sorted().joined(separator: ", ")
        var seenEntities = Set<String>()

        for entity in entities {
            let path = "entities.\(entity.name)"
            if !seenEntities.insert(entity.name).inserted {
                fail(path, "the entity '\(entity.name)' is declared twice")
            }
            if !Self.isValidName(entity.name) {
                fail(
                    path,
                    "'\(entity.name)' is not a valid entity name; names start with a letter or _ and use ASCII letters, digits and _"
                )
            } else if let other = entities.first(where: {
                $0.name != entity.name && $0.name.uppercased() == entity.name.uppercased()
            }),
                names.firstIndex(of: other.name)! < names.firstIndex(of: entity.name)!
            {
                fail(
                    path,
                    "'\(entity.name)' and '\(other.name)' differ only in case, so they would share the store table Z\(entity.name.uppercased()); rename one"
                )
            }
            if let parent = entity.parent {
                if self.entity(named: parent) == nil {
                    fail(path + ".parent", "unknown parent entity '\(parent)'; the entities are \(known)")
                } else if ancestors(of: entity).contains(where: { $0.name == entity.name }) || hasCycle(entity) {
                    fail(path + ".parent", "the inheritance of '\(entity.name)' forms a cycle")
                }
            }
            var seenProperties = Set<String>()
            let inherited = Set(
                ancestors(of: entity).flatMap { $0.attributes.map(\.name) + $0.relationships.map(\.name) })
            // Stored properties become columns Z<NAME>: two names that differ only in case
            // would share one, and one of them lose its values.
            var columns: [String: String] = [:]
            for property in ancestors(of: entity).reversed().flatMap({
                $0.attributes.filter { !$0.isTransient }.map(\.name)
                    + $0.relationships.filter { !$0.isTransient }.map(\.name)
            }) {
                columns[property.uppercased()] = property
            }
            func checkColumn(_ name: String, _ isTransient: Bool, _ path: String) {
                guard !isTransient else { return }
                if let other = columns[name.uppercased()], other != name {
                    fail(
                        path,
                        "'\(name)' and '\(other)' differ only in case, so they would share the store column Z\(name.uppercased()); rename one"
                    )
                }
                columns[name.uppercased()] = columns[name.uppercased()] ?? name
            }
            for attribute in entity.attributes {
                let apath = "\(path).attributes.\(attribute.name)"
                checkProperty(attribute.name, apath, &seenProperties, inherited, fail)
                checkColumn(attribute.name, attribute.isTransient, apath)
                if !attribute.type.isStorable && !attribute.isTransient {
                    fail(apath + ".type", Self.unstorableProblem(attribute.type))
                }
                if let value = attribute.defaultValue, let problem = Self.fitProblem(value, attribute.type) {
                    fail(apath + ".default", "the default value \(value.formatDescription) \(problem)")
                }
                for (bound, key) in [(attribute.minValue, "min"), (attribute.maxValue, "max")] {
                    if case .some = bound,
                        !(attribute.type.isNumeric || attribute.type == .string || attribute.type == .binary
                            || attribute.type == .date)
                    {
                        fail("\(apath).\(key)", "a \(attribute.type.rawValue) attribute has no \(key) bound")
                    } else if let bound, Self.boundProblem(bound, attribute.type) {
                        fail(
                            "\(apath).\(key)",
                            "the \(key) bound \(bound.formatDescription) does not fit a \(attribute.type.rawValue) attribute"
                        )
                    }
                }
            }
            for relationship in entity.relationships {
                let rpath = "\(path).relationships.\(relationship.name)"
                checkProperty(relationship.name, rpath, &seenProperties, inherited, fail)
                checkColumn(relationship.name, relationship.isTransient, rpath)
                guard let destination = self.entity(named: relationship.destination) else {
                    fail(
                        rpath + ".destination",
                        "unknown destination entity '\(relationship.destination)'; the entities are \(known)")
                    continue
                }
                if relationship.minCount < 0 || relationship.maxCount < 0
                    || (relationship.maxCount > 0 && relationship.minCount > relationship.maxCount)
                {
                    fail(
                        rpath,
                        "minCount \(relationship.minCount) and maxCount \(relationship.maxCount) do not make a range")
                }
                if relationship.isOrdered && !relationship.isToMany {
                    fail(rpath + ".ordered", "only a to-many relationship can be ordered")
                }
                guard let inverseName = relationship.inverse else { continue }
                guard let inverse = allRelationships(of: destination).first(where: { $0.name == inverseName }) else {
                    fail(
                        rpath + ".inverse",
                        "the inverse '\(inverseName)' is not a relationship of '\(destination.name)'")
                    continue
                }
                let owners = Set(
                    [entity.name] + ancestors(of: entity).map(\.name) + descendants(of: entity).map(\.name))
                if inverse.inverse != relationship.name || !owners.contains(inverse.destination) {
                    fail(
                        rpath + ".inverse",
                        "the inverse '\(destination.name).\(inverseName)' does not point back: it has destination '\(inverse.destination)' and inverse '\(inverse.inverse ?? "none")'"
                    )
                }
            }
            let propertyNames = Set(allAttributes(of: entity).map(\.name) + allRelationships(of: entity).map(\.name))
            for (i, constraint) in entity.uniquenessConstraints.enumerated() {
                for name in constraint where !propertyNames.contains(name) {
                    fail("\(path).uniquenessConstraints[\(i)]", "'\(name)' is not a property of '\(entity.name)'")
                }
            }
            for fetched in entity.fetchedProperties {
                let fpath = "\(path).fetchedProperties.\(fetched.name)"
                checkProperty(fetched.name, fpath, &seenProperties, inherited, fail)
                if self.entity(named: fetched.entity) == nil {
                    fail(fpath + ".entity", "unknown entity '\(fetched.entity)'; the entities are \(known)")
                }
            }
        }
        return errors
    }

    /// Why a stored attribute cannot have `type`.
    static func unstorableProblem(_ type: AttributeType) -> String {
        switch type {
        case .composite:
            "a stored composite attribute is not supported: Core Data keeps its elements in columns of their own that Remodel does not create, so migrating the store would lose its values; make it transient, or split it into attributes"
        default:
            "a stored attribute cannot be \(type.rawValue) (Core Data refuses it too: only a transient attribute may have no storable type); make it transient or give it one of the types \(AttributeType.storableCases.map(\.rawValue).joined(separator: " "))"
        }
    }

    /// What the model has that Remodel carries or skips rather than does as Core Data does
    /// — derived attributes, preserve-after-deletion, uniqueness constraints, fetch indexes,
    /// fetched properties and configurations — each saying what Remodel does with it, for
    /// the caller to print after loading (`file` as in errors):
    ///
    ///     for warning in model.warnings(file: "Model.xcdatamodel/contents") { print("warning:", warning) }
    public func warnings(file: String? = nil) -> [ModelWarning] {
        var warnings: [ModelWarning] = []
        func warn(_ path: String, _ message: String) {
            warnings.append(ModelWarning(file: file, path: path, message: message))
        }
        for entity in entities {
            let path = "entities.\(entity.name)"
            for attribute in entity.attributes {
                let apath = "\(path).attributes.\(attribute.name)"
                if let expression = attribute.derivationExpression {
                    warn(
                        apath + ".derivationExpression",
                        "derived from '\(expression)': Remodel stores and migrates the value like any attribute's, and does not recompute it when objects change"
                    )
                }
                for predicate in attribute.validationPredicates {
                    warn(
                        apath + ".validationPredicates",
                        "'\(predicate)' carried, not enforced: Remodel saves values that fail it, where Core Data refuses to save them"
                    )
                }
                if let name = attribute.unreadableDefaultClass {
                    warn(
                        apath + ".default",
                        "the default value is an archived \(name), which Remodel cannot hold: objects Remodel makes start without it"
                    )
                }
                if attribute.preservesValueInHistoryOnDeletion {
                    warn(
                        apath + ".preservesValueInHistoryOnDeletion",
                        "carried: Remodel writes no persistent history, so no tombstone keeps this value when it deletes an object"
                    )
                }
            }
            if !entity.uniquenessConstraints.isEmpty {
                let list = entity.uniquenessConstraints.map { "(\($0.joined(separator: ", ")))" }.joined(
                    separator: ", ")
                warn(
                    path + ".uniquenessConstraints",
                    "\(list) carried, not enforced: Remodel neither refuses nor merges duplicates, so a migration that makes duplicates keeps them"
                )
            }
            for index in entity.fetchIndexes {
                let properties = index.properties.joined(separator: ", ")
                warn(
                    "\(path).fetchIndexes.\(index.name ?? "(\(properties))")",
                    "skipped: stores Remodel writes have no index on (\(properties)); an index speeds up Core Data's fetches and holds no data"
                )
            }
            for fetched in entity.fetchedProperties {
                let predicate = fetched.predicate.map { " where \($0)" } ?? ""
                warn(
                    "\(path).fetchedProperties.\(fetched.name)",
                    "a fetched property (\(fetched.entity)\(predicate)) is not stored: Remodel carries it and does not evaluate it"
                )
            }
        }
        for difference in declaredVersionHashDifferences {
            warn("versionHashes", difference)
        }
        for (name, members) in configurations.sorted(by: { $0.key < $1.key }) {
            warn(
                "configurations.\(name)",
                "carried (\(members.joined(separator: ", "))): Remodel creates and migrates a store with every entity of the model, not with one configuration's"
            )
        }
        return warnings
    }

    /// Throws ``ModelErrors`` listing every problem, when there are any.
    public func validate(file: String? = nil) throws(ModelErrors) {
        let errors = validationErrors(file: file)
        if !errors.isEmpty { throw ModelErrors(errors) }
    }

    private func hasCycle(_ entity: EntityDescription) -> Bool {
        var seen: Set<String> = [entity.name]
        var next = entity.parent
        while let name = next {
            if !seen.insert(name).inserted { return true }
            next = self.entity(named: name)?.parent
        }
        return false
    }

    private func checkProperty(
        _ name: String, _ path: String, _ seen: inout Set<String>, _ inherited: Set<String>,
        _ fail: (String, String) -> Void
    ) {
        if !seen.insert(name).inserted { fail(path, "the property '\(name)' is declared twice") }
        if inherited.contains(name) { fail(path, "the property '\(name)' is already inherited from a parent entity") }
        if !Self.isValidName(name) {
            fail(
                path,
                "'\(name)' is not a valid property name; names start with a letter or _ and use ASCII letters, digits and _"
            )
        }
        if Self.reservedPropertyNames.contains(name) {
            fail(
                path,
                "'\(name)' is reserved (it clashes with an NSManagedObject method or a store column); choose another name"
            )
        }
    }

    static let reservedPropertyNames: Set<String> = ["description", "entity", "objectID", "self", "class", "hash"]

    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic || first == "_" else {
            return false
        }
        return name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_")
        }
    }

    /// Why `value` cannot be stored in an attribute of `type`, or nil when it can.
    static func fitProblem(_ value: Value, _ type: AttributeType) -> String? {
        switch (type, value) {
        case (_, .null): return nil
        case (.int16, .integer(let i)), (.int32, .integer(let i)), (.int64, .integer(let i)):
            return type.integerRange!.contains(i) ? nil : "is out of range for \(type.rawValue)"
        case (.int16, .bool), (.int32, .bool), (.int64, .bool), (.boolean, .bool): return nil
        case (.boolean, .integer(let i)): return i == 0 || i == 1 ? nil : "is not a boolean (0 or 1)"
        case (.double, .integer), (.double, .double), (.float, .integer), (.float, .double), (.decimal, .integer),
            (.decimal, .double), (.decimal, .decimal):
            return nil
        case (.string, .string), (.uri, .string), (.date, .date), (.binary, .data), (.transformable, .data): return nil
        case (.uuid, .string(let s)): return UUIDText.isValid(s) ? nil : "is not a UUID"
        case (.uuid, .data(let d)): return d.count == 16 ? nil : "is not 16 bytes"
        default: return "does not fit a \(type.rawValue) attribute"
        }
    }

    private static func boundProblem(_ bound: Value, _ type: AttributeType) -> Bool {
        switch type {
        case .string, .binary: return bound.integerValue == nil
        case .date: if case .date = bound { return false } else { return bound.doubleValue == nil }
        default: return !bound.isNumber
        }
    }
}

enum UUIDText {
    static func isValid(_ s: String) -> Bool {
        let parts = s.split(separator: "-", omittingEmptySubsequences: false)
        return parts.map(\.count) == [8, 4, 4, 4, 12] && s.allSatisfy { $0 == "-" || $0.isHexDigit }
    }
}
