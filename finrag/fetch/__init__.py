"""Filings from SEC EDGAR into a folder `finrag ingest` reads (`finrag fetch`).

Layers: ``client`` speaks HTTP under the SEC's fair-access rules (a declared User-Agent,
at most 10 requests a second, retries with backoff); ``edgar`` knows EDGAR's JSON and
paths; ``folder`` lays the files out and keeps the manifest of what was fetched; ``run``
puts them together. Nothing here runs unless `finrag fetch` is asked for.
"""
