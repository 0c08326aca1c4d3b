"""gavel's version, in a module of its own so that manifests, reports and calibration files
can name it without importing the top-level package (which is the public API, above them)."""

__version__ = "0.1.0"
