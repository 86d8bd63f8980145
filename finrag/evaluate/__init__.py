"""Evaluation: datasets, metrics, runs and reports for retrieval and answers."""
