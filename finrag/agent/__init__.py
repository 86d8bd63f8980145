"""The chat agent: a small explicit graph of nodes over `ask`, with memory in Postgres."""
