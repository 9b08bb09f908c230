import Foundation

// `mapping-migrate` arrives with the migration engine (see docs/cli.md). Until then it
// says so plainly and exits with the "bad input" code rather than pretending to work.
FileHandle.standardError.write(Data("mapping-migrate: not available yet; the migration engine is still being built\n".utf8))
exit(2)
