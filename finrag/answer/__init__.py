"""Answers: the calculator, numbers in text, and the cited-answer pipeline."""
