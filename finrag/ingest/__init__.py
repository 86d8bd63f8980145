"""Filings in, chunks and vectors out: discover, parse, read metadata, chunk, embed, store."""
