"""Retrieval: filters from the question, hybrid search inside Postgres, reranking."""
