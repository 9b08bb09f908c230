@_exported import Remodel
