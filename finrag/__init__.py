"""finrag: grounded, cited answers over financial filings, local and offline."""

# The one place the version lives (pyproject reads it): no metadata scan at import.
__version__ = "0.1.0"
