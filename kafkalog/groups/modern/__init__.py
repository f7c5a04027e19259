"""KIP-848 consumer groups (``group.protocol=consumer``), as Kafka 4.0's group coordinator
runs them (its ``modern.consumer`` package and the consumer-group half of
``GroupMetadataManager``):

=================================  ===========================================================
``consumer_group``                 the state of a group and its members (epochs, assignments,
                                   regular expressions), changed only by replaying records
``records``                        the ``__consumer_offsets`` records of types 3-8 and 16:
                                   builders and replay
``current_assignment_builder``     one reconciliation step of a member towards its target
``coordinator``                    ConsumerGroupHeartbeat, ConsumerGroupDescribe, timeouts,
                                   target assignment, regular-expression resolution
``classic_members``                classic-protocol members inside consumer groups and the
                                   online upgrade/downgrade between the two kinds of group
=================================  ===========================================================

:class:`kafkalog.groups.GroupCoordinator` owns a
:class:`~kafkalog.groups.modern.coordinator.ConsumerGroupCoordinator` and routes to it.
"""
