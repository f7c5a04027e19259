"""Structured decoders for Kafka's internal topics, in the JSON shapes Kafka's tools print.

* :mod:`~kafkalog.decoders.offsets`: ``__consumer_offsets`` (``--offsets-decoder``)
* :mod:`~kafkalog.decoders.transaction_log`: ``__transaction_state``
  (``--transaction-log-decoder``)
* :mod:`~kafkalog.decoders.cluster_metadata`: KRaft ``__cluster_metadata``
  (``--cluster-metadata-decoder``)
* :mod:`~kafkalog.decoders.remote_log_metadata`: tiered storage's ``__remote_log_metadata``
  (``--remote-log-metadata-decoder``; its payload is a Java ``toString``, not JSON)
* :mod:`~kafkalog.decoders.share_group_state`: ``__share_group_state``
  (``--share-group-state-decoder``)

Each has ``decode_record(key, value) -> (key text, payload text)`` (exactly DumpLogSegments'
strings), ``decode_record_obj(key, value) -> dict`` (Python values), ``format_for_dump(key,
value, offset)`` (adds Kafka's ``Error at ...`` texts) and an ``encode_record`` writer. They are
driven by Kafka's message schemas (:mod:`~kafkalog.decoders._schemas`) through the generic
codec :mod:`~kafkalog.decoders.message`. Submodules are imported on demand.
"""
