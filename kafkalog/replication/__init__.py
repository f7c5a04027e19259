"""Replicas of one partition side by side: Kafka's follower truncation rules, replayed offline.

* :mod:`kafkalog.replication.fetcher`: the replica fetcher's truncation protocol (sans-IO);
* :mod:`kafkalog.replication.compare`: partition directories copied off several brokers,
  compared record by record, with what each would lose under each leader;
* :mod:`kafkalog.replication.command`: ``kafkalog compare-replicas``.
"""
