"""Kafka's console clients over log directories, offline.

``kafkalog console-consumer LOGDIR... --topic T`` is ``kafka-console-consumer.sh``
(:mod:`.console_consumer`, with Kafka's message formatters in :mod:`.message_formatters` and
its deserializers in :mod:`.deserializers`); ``kafkalog console-producer LOGDIR --topic T`` is
``kafka-console-producer.sh`` (:mod:`.console_producer`, reading lines as Kafka's
``LineMessageReader`` does, :mod:`.line_message_reader`, and partitioning as the producer's
``BuiltInPartitioner``, :mod:`.partitioner`). Both work on the files, no broker: see each
module for what a log dir cannot give (a live tail, a producer id).
"""
