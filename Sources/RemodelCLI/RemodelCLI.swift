// The logic behind the command-line tools, kept out of the thin executables so that it
// can be tested as a library: MappingEval/ holds `mapping-eval` (EvalCommand, EvalSession,
// EvalREPL, JSONLProtocol, LineEditor; docs/mapping-eval.md).
@_exported import Remodel
