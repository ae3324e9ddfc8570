"""attn's CLI test groups, one file per topic, run one group at a time by
tests/cli_test.py (its docstring says how to add a group)."""
