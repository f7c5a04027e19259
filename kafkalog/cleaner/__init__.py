"""Log compaction: Kafka's ``LogCleaner``, ``Cleaner``, ``LogCleanerManager`` and
``SkimpyOffsetMap``, in the engine.

Modules (named as Kafka names the classes):

* :mod:`~kafkalog.cleaner.cleaner_config` -- ``CleanerConfig`` (``log.cleaner.*`` settings);
* :mod:`~kafkalog.cleaner.offset_map` -- ``SkimpyOffsetMap`` (MD5(key) -> latest offset);
* :mod:`~kafkalog.cleaner.cleaned_transaction_metadata` -- transaction state while cleaning;
* :mod:`~kafkalog.cleaner.cleaner_stats` -- ``CleanerStats``, ``PreCleanStats``;
* :mod:`~kafkalog.cleaner.log_to_clean` -- ``LogToClean`` (a log and its dirty range);
* :mod:`~kafkalog.cleaner.cleaner` -- ``Cleaner``: map, group, clean into ``.cleaned``, swap;
* :mod:`~kafkalog.cleaner.log_cleaner_manager` -- ``LogCleanerManager``: the dirtiest log,
  ``cleaner-offset-checkpoint``, uncleanable partitions, compaction lags;
* :mod:`~kafkalog.cleaner.log_cleaner` -- ``LogCleaner``: what ``LogDir`` and its scheduler run.

:meth:`kafkalog.log.Log.clean` cleans one log; the swap's crash recovery is in
:mod:`kafkalog.loader`. The hot loops are the numba kernels of ``kafkalog.native``
(``md5``, ``offset_map``, ``record_filter``).
"""
