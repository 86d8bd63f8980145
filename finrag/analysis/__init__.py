"""Analyses built on the Asker, at the agent layer: a persona analysis (each persona's own
questions put to the store, then one synthesis that keeps their cited findings and says,
by rule, where they disagree) and a research memo (a question planned into sub-questions,
read in bounded rounds, written up with a figures table and a citation on every claim).

The CLI (``finrag analyze``, ``finrag research``) only parses, calls and prints.
"""
