"""The package version, on its own so the CLI and reports can name it without importing the library."""

__version__ = "0.1.0"
