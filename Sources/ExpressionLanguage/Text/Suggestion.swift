/// The closest of a few names to a misspelt one, for "did you mean" hints.
public enum Suggestion {
    public static func closest(to word: String, among candidates: some Sequence<String>) -> String? {
        let lowered = word.lowercased()
        var best: (String, Int)?
        for candidate in candidates {
            let distance = editDistance(lowered, candidate.lowercased())
            if distance <= max(1, min(3, candidate.count / 3)), distance < (best?.1 ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.0
    }

    /// The optimal string alignment distance: insertions, deletions, substitutions and
    /// swaps of two neighbours (`emial` → `email`) each count one.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}
