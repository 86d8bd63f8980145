"""The knowledge graph of the filings: entities and relations by rules (sql/011)."""
