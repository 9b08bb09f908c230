// The umbrella module: `import Remodel` gives an embedder the whole library.
@_exported import ExpressionLanguage
@_exported import Migration
@_exported import ObjectGraph
