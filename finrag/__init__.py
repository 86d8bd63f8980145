"""finrag: grounded, cited answers over financial filings, local and offline."""

from finrag.telemetry import turn_off_telemetry

# The one place the version lives (pyproject reads it): no metadata scan at import.
__version__ = "0.1.0"

# Before any library that reads its telemetry switch at import is imported.
turn_off_telemetry()
