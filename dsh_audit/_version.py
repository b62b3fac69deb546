"""The package version, on its own so the CLI and reports can name it without importing the library."""

__version__ = "0.1.0"

#: What this version reads and reproduces, for ``--version`` (without importing the library;
#: ``tests/test_conventions.py`` checks them against the reader's and the renderers' own).
DSH_RELEASE = "0.1.0-rc.8"
LOG_FORMATS = (0, 1, 2, 3, 4)
PI_AI_RELEASE = "0.82.1"
