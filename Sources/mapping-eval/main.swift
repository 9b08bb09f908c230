// mapping-eval: the REPL, one-shot evaluation and the --jsonl protocol. The logic lives in
// RemodelCLI (EvalCommand, EvalSession) so that it can be tested as a library too.
import RemodelCLI

EvalCommand.main()
