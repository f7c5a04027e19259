"""Operator tools over log files: what the ``kafkalog`` commands for inspecting and rescuing
partitions run.

``dump`` (Kafka's DumpLogSegments, as items and findings), ``render`` (its text shapes per Kafka
version, and JSON lines), ``verify`` (read-only consistency findings), ``repair`` (engine recovery
on a copy, with a loss report) and ``demo`` (the README's end-to-end job). They sit above the
engine and never below it: the engine does not import them.
"""
