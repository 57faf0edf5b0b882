"""Relational and simplicial agents (Section 5), IMPALA training on Ray RLlib, analysis."""
