"""The KIP-848 half of the group coordinator: ConsumerGroupHeartbeat and what follows from it.

Ported from Kafka 4.0's ``GroupMetadataManager`` (``consumerGroupHeartbeat``,
``consumerGroupLeave``, ``consumerGroupFenceMember``, ``updateTargetAssignment``,
``maybeReconcile``, the session and rebalance timeouts) and ``TargetAssignmentBuilder``. A
heartbeat builds ``__consumer_offsets`` records (types 3-8), appends them in one batch and
replays them (:meth:`GroupMetadataManager.write_records`): the group's state is only ever what
its records say, as in Kafka, so a restarted coordinator continues every group.

One heartbeat, in Kafka's order:

1. the member is created (epoch 0) or found; its subscription, rack, rebalance timeout and
   server assignor are updated (a ``ConsumerGroupMemberMetadata`` record when anything changed);
2. if its subscribed topics changed, or the subscribed topics' metadata did (a topic created,
   deleted or given more partitions: :meth:`ConsumerGroupCoordinator.metadata_changed`), the
   subscription metadata is recomputed and the **group epoch** bumped;
3. a group epoch above the assignment epoch computes a new **target assignment** with the
   server-side assignor most members ask for (``uniform`` by default, or ``range``);
4. the member takes one reconciliation step towards its target
   (:mod:`~kafkalog.groups.modern.current_assignment_builder`): revoke first, then receive what the
   other members released;
5. its session timeout (``group.consumer.session.timeout.ms``) restarts; a member asked to
   revoke must do so within its rebalance timeout, or it is fenced.

The response carries the assignment when the request was a full one (joining, or after an
error) or when the member's assignment changed.

Static members (``group.instance.id``) follow Kafka's rules: one leaving with epoch -2 keeps
its partitions until it rejoins under a new member id (which inherits them) or its session
expires; a second instance with the same id is refused (UNRELEASED_INSTANCE_ID,
FENCED_INSTANCE_ID).

Regular-expression subscriptions (``SubscribedTopicRegex``, Kafka 4.0) are resolved by the
coordinator against the cluster's topics (full matches; RE2/J's syntax, whose lookarounds and
backreferences are refused as RE2/J refuses them), stored as type-16 records and refreshed
together at most every 10 s when an expression is unresolved or topics appeared. Kafka resolves
in a background executor and applies the result as a later write; here it runs at the end of
the heartbeat that asked for it, after that heartbeat's records.

Classic-protocol members of a consumer group and the online upgrade/downgrade between the two
kinds of group (Kafka 4.0's default ``group.consumer.migration.policy=bidirectional``) are in
:mod:`kafkalog.groups.modern.classic_members`.

Not ported: rack-aware assignment.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...checkpoint import Uuid
from ...errors import KafkaLogError
from ..assignors import assign
from ..error_codes import ErrorCode
from ..metadata_hash import TopicHashes
from ..records import group_metadata_tombstone
from ..responses import (
    ConsumerGroupDescribedGroup,
    ConsumerGroupDescribedMember,
    ConsumerGroupHeartbeatResponse,
    DescribedTopicPartitions,
)
from . import records as cgr
from .classic_members import (
    ClassicMembersMixin,
    Refusal,
    rebalance_key,
    session_key,
)
from .consumer_group import (
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
    ResolvedRegex,
    TopicMetadata,
    assignment_to_list,
)
from .current_assignment_builder import FencedMemberEpoch, build
from .subscription_regex import InvalidSubscriptionRegex, compile_subscription_regex

if TYPE_CHECKING:  # pragma: no cover
    from ..coordinator import GroupCoordinator

__all__ = ["ConsumerGroupCoordinator", "LEAVE_GROUP_MEMBER_EPOCH",
           "LEAVE_GROUP_STATIC_MEMBER_EPOCH", "CONSUMER_GROUP_ASSIGNORS", "topic_id_for"]

logger = logging.getLogger(__name__)

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
#: ConsumerGroupHeartbeat versions served (v1: the member id comes from the client)
HEARTBEAT_LATEST_VERSION = 1
#: ``REGEX_BATCH_REFRESH_INTERVAL_MS``: the group's expressions are resolved at most this often
REGEX_BATCH_REFRESH_INTERVAL_MS = 10_000
#: ``group.consumer.assignors`` (4.0 default: uniform, range; the first is the default) ->
#: the project's assignor
CONSUMER_GROUP_ASSIGNORS: dict[str, str] = {"uniform": "uniform", "range": "server-range"}


def topic_id_for(topic: str) -> str:
    """The id (Kafka's string form) of a topic fed without one: the server's derived id."""
    return str(Uuid.derived(topic))


def _compile_regex(regex: str) -> Any:
    """``throwIfRegularExpressionIsInvalid``: the expression compiled as RE2/J would
    (:mod:`.subscription_regex`), else INVALID_REGULAR_EXPRESSION with Kafka's message and
    RE2/J's description of the error."""
    try:
        return compile_subscription_regex(regex)
    except InvalidSubscriptionRegex as e:
        raise Refusal(ErrorCode.INVALID_REGULAR_EXPRESSION,
                      f"SubscribedTopicRegex `{regex}` is not a valid regular expression: "
                      f"{e.description}.") from None


class ConsumerGroupCoordinator(ClassicMembersMixin):
    """The consumer-group (KIP-848) requests of a :class:`GroupCoordinator` (which owns the
    storage, the clock, the timers and the topic metadata, and delegates here)."""

    def __init__(self, owner: GroupCoordinator) -> None:
        self._owner = owner
        #: topic name -> (topic id, partition count)
        self._topics: dict[str, tuple[str, int]] = {}
        #: topic name -> its replicas' racks per partition; the topics' KIP-1101 hashes
        self._racks: dict[str, Sequence[Sequence[str]]] = {}
        self._topic_hashes = TopicHashes()
        #: bumped at every change of the topics; the version at which topics last appeared
        self._topics_version = 0
        self._new_topics_version = 0
        for group in self._groups().values():
            for member in group.members.values():
                # (classic-protocol members keep their own session timeout)
                self._schedule_classic_session(group.group_id, member)

    # -- shared state ---------------------------------------------------------------------------

    def _groups(self) -> dict[str, ConsumerGroup]:
        return self._owner.manager.consumer_groups()

    def group(self, group_id: str) -> ConsumerGroup | None:
        """The consumer group, or None (unknown or classic)."""
        return self._owner.manager.consumer_group(group_id)

    def set_topics(self, topics: Mapping[str, tuple[str, int]],
                   racks: Mapping[str, Sequence[Sequence[str]]] | None = None) -> None:
        """The cluster's topics: name -> (topic id, partition count); ``racks``: topic -> its
        replicas' racks per partition (KIP-1101 hashes them; none by default). Groups
        subscribed to a topic whose id, count or racks changed recompute their subscription
        metadata and hash on their next heartbeat (``onNewMetadataImage`` ->
        ``requestMetadataRefresh``)."""
        old, self._topics = self._topics, dict(topics)
        old_racks, self._racks = self._racks, dict(racks or {})
        self._topic_hashes = TopicHashes(self._topics, self._racks)
        changed = {t for t in set(old) | set(self._topics) if old.get(t) != self._topics.get(t)
                   or old_racks.get(t) != self._racks.get(t)}
        if changed:
            # (Kafka's metadata image offset: the version a regular expression is resolved at)
            self._topics_version += 1
            if set(self._topics) - set(old):
                self._new_topics_version = self._topics_version
        for group in self._groups().values():
            if changed & set(group.subscribed_topics_with(None, None)):
                group.metadata_refresh_needed = True

    def _config(self) -> Any:
        return self._owner.config

    def _now(self) -> int:
        return int(self._owner.clock.milliseconds())

    def _write(self, group_id: str, records: list[tuple[bytes, bytes | None]]) -> None:
        if not records:
            return
        try:
            self._owner.manager.write_records(group_id, records)
        except (KafkaLogError, OSError) as e:
            logger.warning("failed to write records of consumer group %s: %s", group_id, e)
            raise Refusal(ErrorCode.NOT_COORDINATOR, str(e)) from None
        self._owner._wrote = True

    # -- ConsumerGroupHeartbeat ---------------------------------------------------------------

    def heartbeat(
        self,
        group_id: str,
        member_id: str,
        member_epoch: int,
        *,
        instance_id: str | None = None,
        rack_id: str | None = None,
        rebalance_timeout_ms: int = -1,
        subscribed_topic_names: Iterable[str] | None = None,
        subscribed_topic_regex: str | None = None,
        server_assignor: str | None = None,
        topic_partitions: Iterable[tuple[str, Iterable[int]]] | None = None,
        client_id: str = "",
        client_host: str = "",
        api_version: int = HEARTBEAT_LATEST_VERSION,
        describable_topics: Callable[[frozenset[str]], Iterable[str]] | None = None,
    ) -> ConsumerGroupHeartbeatResponse:
        """ConsumerGroupHeartbeat (see the module docstring); errors are response codes.
        ``api_version`` >= 1 requires the member id from the first request (KIP-1082: the
        client generates it). ``describable_topics`` is the authorizer as seen by this
        request's principal: given topic names, those it may DESCRIBE (None: no authorizer);
        a regular-expression refresh this heartbeat triggers resolves the group's expressions
        to those topics only (Kafka's ``filterTopicDescribeAuthorizedTopics``)."""
        names = None if subscribed_topic_names is None else [str(t) for t in
                                                              subscribed_topic_names]
        owned = None if topic_partitions is None else [
            (str(t), [int(p) for p in ps]) for t, ps in topic_partitions]
        try:
            self._validate(group_id, member_id, member_epoch, instance_id, rack_id,
                           rebalance_timeout_ms, names, subscribed_topic_regex,
                           server_assignor, owned, api_version)
            if not self._owner.manager.owns(group_id):
                raise Refusal(ErrorCode.NOT_COORDINATOR)
            if member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                return self._leave(group_id, member_id, member_epoch, instance_id)
            return self._heartbeat(group_id, member_id, member_epoch, instance_id, rack_id,
                                   rebalance_timeout_ms, names, subscribed_topic_regex,
                                   server_assignor, owned, client_id, client_host,
                                   describable_topics)
        except Refusal as e:
            return ConsumerGroupHeartbeatResponse(error_code=e.code, error_message=e.message)

    @staticmethod
    def _validate(group_id: str, member_id: str, member_epoch: int, instance_id: str | None,
                  rack_id: str | None, rebalance_timeout_ms: int, names: list[str] | None,
                  regex: str | None, assignor: str | None, owned: list | None,
                  api_version: int) -> None:
        """``throwIfConsumerGroupHeartbeatRequestIsInvalid`` (Kafka 4.0)."""
        def not_empty(value: str | None, message: str) -> None:
            if value is not None and value.strip() == "":
                raise Refusal(ErrorCode.INVALID_REQUEST, message)

        if api_version >= 1 or member_epoch > 0 or member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
            not_empty(member_id, "MemberId can't be empty.")
        not_empty(group_id, "GroupId can't be empty.")
        not_empty(instance_id, "InstanceId can't be empty.")
        not_empty(rack_id, "RackId can't be empty.")
        if member_epoch == 0:
            if rebalance_timeout_ms == -1:
                raise Refusal(ErrorCode.INVALID_REQUEST,
                              "RebalanceTimeoutMs must be provided in first request.")
            if owned is None or owned:
                raise Refusal(ErrorCode.INVALID_REQUEST,
                              "TopicPartitions must be empty when (re-)joining.")
            # (an empty list of names or an empty regex: a member subscribed to nothing yet)
            if names is None and regex is None:
                raise Refusal(ErrorCode.INVALID_REQUEST,
                              "Either SubscribedTopicNames or SubscribedTopicRegex must be "
                              "non-null when (re-)joining.")
        elif member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if instance_id is None:
                raise Refusal(ErrorCode.INVALID_REQUEST, "InstanceId can't be null.")
        elif member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            raise Refusal(ErrorCode.INVALID_REQUEST, "MemberEpoch is invalid.")
        if assignor is not None and assignor not in CONSUMER_GROUP_ASSIGNORS:
            raise Refusal(ErrorCode.UNSUPPORTED_ASSIGNOR,
                          f"ServerAssignor {assignor} is not supported. Supported assignors: "
                          f"{', '.join(CONSUMER_GROUP_ASSIGNORS)}.")

    def _group_for_heartbeat(self, group_id: str, create: bool,
                             records: list[tuple[bytes, bytes | None]]) -> ConsumerGroup:
        """``getOrMaybeCreateConsumerGroup``: an empty classic group is replaced."""
        group = self.group(group_id)
        if group is not None:
            return group
        if self._owner.manager.streams_group(group_id) is not None:
            # (a KIP-1071 streams group, even an empty one, keeps its id)
            raise Refusal(ErrorCode.GROUP_ID_NOT_FOUND,
                          f"Group {group_id} is not a consumer group.")
        classic = self._owner._get_group(group_id)
        if classic is None and not create:
            raise Refusal(ErrorCode.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
        if classic is not None:
            if create and str(classic.state) == "Empty":
                # maybeDeleteEmptyClassicGroup (its offsets stay: keyed by the group id)
                records.append(group_metadata_tombstone(group_id))
            elif create and self._config().group_consumer_migration_policy in (
                    "upgrade", "bidirectional") and classic.uses_consumer_protocol() \
                    and classic.num_members <= self._config().group_consumer_max_size:
                return self._upgrade(classic, records)     # validateOnlineUpgrade
            else:
                raise Refusal(ErrorCode.GROUP_ID_NOT_FOUND,
                              f"Group {group_id} is not a consumer group")
        return ConsumerGroup(group_id)

    def _heartbeat(self, group_id: str, member_id: str, member_epoch: int,
                   instance_id: str | None, rack_id: str | None, rebalance_timeout_ms: int,
                   names: list[str] | None, regex: str | None, server_assignor: str | None,
                   owned: list | None, client_id: str, client_host: str,
                   describable_topics: Callable[[frozenset[str]], Iterable[str]] | None = None
                   ) -> ConsumerGroupHeartbeatResponse:
        records: list[tuple[bytes, bytes | None]] = []
        create = member_epoch == 0
        group = self._group_for_heartbeat(group_id, create, records)
        max_size = self._config().group_consumer_max_size
        if len(group.members) >= max_size and (not member_id or member_id not in group.members):
            raise Refusal(ErrorCode.GROUP_MAX_SIZE_REACHED,
                          f"The consumer group has reached its maximum capacity of "
                          f"{max_size} members.")
        if not member_id:
            member_id = str(uuid.uuid4())
        member = self._member_for(group, member_id, member_epoch, instance_id, owned, create,
                                  records)

        # 1. the member's subscription
        changes: dict[str, Any] = {}
        if instance_id is not None and instance_id != member.instance_id:
            changes["instance_id"] = instance_id
        if rack_id is not None and rack_id != member.rack_id:
            changes["rack_id"] = rack_id
        if rebalance_timeout_ms != -1 and rebalance_timeout_ms != member.rebalance_timeout_ms:
            changes["rebalance_timeout_ms"] = rebalance_timeout_ms
        if server_assignor is not None and server_assignor != member.server_assignor_name:
            changes["server_assignor_name"] = server_assignor
        if names is not None and tuple(sorted(set(names))) != member.subscribed_topic_names:
            changes["subscribed_topic_names"] = tuple(sorted(set(names)))
        if regex is not None and regex != member.subscribed_topic_regex:
            changes["subscribed_topic_regex"] = regex
        if client_id != member.client_id:
            changes["client_id"] = client_id
        if client_host != member.client_host:
            changes["client_host"] = client_host
        if member.classic_member_metadata is not None:
            changes["classic_member_metadata"] = None   # (the member moved to this protocol)
        updated = replace(member, **changes) if changes else member
        reconciled, refresh = self._update_member(group, member, updated, owned, records,
                                                  new_group_bumps=True, regexes=True)
        self._write(group_id, records)
        if group_id in self._owner._groups:
            upgraded = self.group(group_id)
            self._owner._forget_classic(group_id)
            if upgraded is not None:
                self._after_upgrade(upgraded)
        if refresh:
            # Kafka resolves in its executor and applies the result as a later write; here
            # the resolution runs at once, after this heartbeat's records (same order); with
            # the authorizer as seen by this heartbeat's principal (Kafka passes the request
            # context of the member whose heartbeat scheduled the refresh)
            self._refresh_regexes(group_id, refresh, describable_topics)
        if reconciled is not updated and reconciled != updated:
            if reconciled.state == MemberState.UNREVOKED_PARTITIONS:
                self._schedule_rebalance_timeout(group_id, member_id, reconciled.member_epoch,
                                                 reconciled.rebalance_timeout_ms)
            else:
                self._owner._timer_impl.cancel(rebalance_key(group_id, member_id))
        self._schedule_session_timeout(group_id, member_id)

        response = ConsumerGroupHeartbeatResponse(
            member_id=member_id, member_epoch=reconciled.member_epoch,
            heartbeat_interval_ms=self._owner.consumer_timeouts(group_id)[1])
        full = member_epoch == 0 or (rebalance_timeout_ms != -1 and names is not None
                                     and owned is not None)
        if full or (member.assigned_partitions is not reconciled.assigned_partitions
                    and dict(member.assigned_partitions)
                    != dict(reconciled.assigned_partitions)):
            response.assignment = assignment_to_list(reconciled.assigned_partitions)
        return response

    def _member_for(self, group: ConsumerGroup, member_id: str, member_epoch: int,
                    instance_id: str | None, owned: list | None, create: bool,
                    records: list[tuple[bytes, bytes | None]], classic: bool = False
                    ) -> ConsumerGroupMember:
        """``getOrMaybeSubscribe{Dynamic,Static}ConsumerGroupMember``."""
        if instance_id is not None:
            return self._static_member(group, member_id, member_epoch, instance_id, owned,
                                       create, records, classic)
        member = group.members.get(member_id)
        if member is None:
            if not create:
                raise Refusal(ErrorCode.UNKNOWN_MEMBER_ID,
                              f"Member {member_id} is not a member of group "
                              f"{group.group_id}.")
            return ConsumerGroupMember(member_id)
        if not classic:
            self._check_epoch(member, member_epoch, owned)
        return member

    def _update_member(self, group: ConsumerGroup, member: ConsumerGroupMember,
                       updated: ConsumerGroupMember, owned: list | None,
                       records: list[tuple[bytes, bytes | None]], *, new_group_bumps: bool,
                       regexes: bool) -> tuple[ConsumerGroupMember, frozenset[str]]:
        """Steps 1-4 of a heartbeat (or of a classic member's JoinGroup) once the member's
        new fields are known: its record, the group epoch, the target assignment, one
        reconciliation step. Returns the reconciled member and the regular expressions to
        resolve after the write."""
        group_id = group.group_id
        instance_id = updated.instance_id
        is_new = member.member_id not in group.members and group.static_member(instance_id) \
            is None
        # a new group must move away from epoch 0 (and be fully initialised)
        bump = new_group_bumps and group.group_epoch == 0
        if updated is not member and updated != member:   # (identity first: the steady case)
            records.append(cgr.member_subscription_record(group_id, updated))
            bump |= set(updated.subscribed_topic_names) != set(member.subscribed_topic_names)
        refresh: frozenset[str] = frozenset()
        if regexes:
            regex_bump, refresh = self._maybe_update_regexes(group, member, updated, records)
            bump |= regex_bump

        # 2. the group epoch
        group_epoch = group.group_epoch
        metadata = group.subscription_metadata
        if bump or group.metadata_refresh_needed:
            subscribed = group.subscribed_topics_with(None if is_new else member, updated)
            metadata = self._subscription_metadata(subscribed)
            # Kafka 4.1+ bumps on a new KIP-1101 hash; 4.0 on new subscription metadata
            # (record 4, still written so that a 4.0 coordinator reads the group too)
            new_hash = self._metadata_hash(subscribed)
            if metadata != group.subscription_metadata:
                bump = True
                records.append(cgr.subscription_metadata_record(group_id, metadata))
            if bump or new_hash != group.metadata_hash:
                bump = True
                group_epoch += 1
                records.append(cgr.group_epoch_record(group_id, group_epoch, new_hash))
                logger.info("[GroupId %s] Bumped group epoch to %d.", group_id, group_epoch)
            group.metadata_refresh_needed = False

        # 3. the target assignment
        if group_epoch > group.assignment_epoch:
            previous = None if instance_id is None else group.static_members.get(instance_id)
            target = self._update_target_assignment(
                group, group_epoch, None if is_new else member, updated, metadata, records,
                removed=previous if previous != updated.member_id else None)
            target_epoch = group_epoch
        else:
            target_epoch = group.assignment_epoch
            target = group.target_of(updated.member_id, instance_id)

        # 4. one reconciliation step
        reconciled = updated
        if not updated.is_reconciled_to(target_epoch):
            try:
                reconciled = build(updated, target_epoch, target, group.current_partition_epoch,
                                   owned)
            except FencedMemberEpoch as e:
                raise Refusal(ErrorCode.FENCED_MEMBER_EPOCH, str(e)) from None
            if reconciled is not updated and reconciled != updated:
                records.append(cgr.current_assignment_record(group_id, reconciled))
        return reconciled, refresh

    # -- regular expressions (KIP-848 broker-side pattern subscriptions) ----------------------

    def _maybe_update_regexes(self, group: ConsumerGroup, member: ConsumerGroupMember,
                              updated: ConsumerGroupMember,
                              records: list[tuple[bytes, bytes | None]]
                              ) -> tuple[bool, frozenset[str]]:
        """``maybeUpdateRegularExpressions``: ``(bump the group epoch, the expressions to
        resolve now)`` (empty: no refresh). A new expression is compiled first
        (INVALID_REGULAR_EXPRESSION); all the group's expressions are refreshed together, at
        most every 10 s, when one is unresolved or topics were created since."""
        old, new = member.regex, updated.regex
        bump = refresh = False
        if member.subscribed_topic_regex != updated.subscribed_topic_regex:
            if old and group.subscribed_regexes.get(old, 0) == 1:
                # the last member subscribed to it: its resolution goes
                records.append(cgr.regex_tombstone(group.group_id, old))
            if new:
                if group.subscribed_regexes.get(new, 0) == 0:
                    _compile_regex(new)
                    refresh = True
                else:
                    bump = new in group.resolved_regexes
        if not refresh and not group.subscribed_regexes:
            return bump, frozenset()
        if self._now() <= group.last_regex_refresh_ms + REGEX_BATCH_REFRESH_INTERVAL_MS:
            return bump, frozenset()
        subscribed = dict(group.subscribed_regexes)
        if old:
            subscribed[old] = subscribed.get(old, 0) - 1
        if new:
            subscribed[new] = subscribed.get(new, 0) + 1
        subscribed = {r: n for r, n in subscribed.items() if n > 0}
        refresh |= len(subscribed) != len(group.resolved_regexes)
        refresh |= group.last_regex_version < self._new_topics_version
        return bump, frozenset(subscribed) if refresh and subscribed else frozenset()

    def _refresh_regexes(self, group_id: str, regexes: frozenset[str],
                         describable_topics: Callable[[frozenset[str]], Iterable[str]] | None
                         = None) -> None:
        """``refreshRegularExpressions`` + ``handleRegularExpressionsResult``: every topic
        matched in full by each expression; records for the expressions still subscribed, new
        subscription metadata and a group epoch bump when what they match changed.

        ``filterTopicDescribeAuthorizedTopics`` (Kafka 4.0+, KAFKA-18813): with an authorizer
        (``describable_topics`` not None), the topics matched by any of the expressions are
        authorized for DESCRIBE once, for the principal of the heartbeat that triggered the
        refresh, and a denied topic leaves every expression's resolution."""
        group = self.group(group_id)
        if group is None:
            return
        now = self._now()
        compiled = {}
        for regex in regexes:
            try:
                compiled[regex] = _compile_regex(regex)
            except Refusal:
                logger.error("[GroupId %s] Couldn't parse regular expression '%s'. Ignoring it.",
                             group_id, regex)
        matched = {regex: frozenset(t for t in self._topics if p.fullmatch(t))
                   for regex, p in compiled.items()}
        if describable_topics is not None:
            candidates = frozenset().union(*matched.values())
            denied = candidates - frozenset(describable_topics(candidates))
            if denied:
                matched = {regex: topics - denied for regex, topics in matched.items()}
        resolved = {regex: ResolvedRegex(topics, self._topics_version, now)
                    for regex, topics in matched.items()}
        records: list[tuple[bytes, bytes | None]] = []
        bump = False
        counts = dict(group.subscribed_topic_names)
        for regex, r in resolved.items():
            if group.subscribed_regexes.get(regex, 0) == 0:
                continue
            before = group.resolved_regexes.get(regex)
            if before is None or before.topics != r.topics:
                bump = True
            records.append(cgr.regex_record(group_id, regex, r))
        # the topics the group subscribes to once these resolutions apply
        for regex, subscribers in group.subscribed_regexes.items():
            r = resolved.get(regex, group.resolved_regexes.get(regex))
            if subscribers and r is not None:
                for t in r.topics:
                    counts[t] = counts.get(t, 0) + 1
        metadata = self._subscription_metadata(counts)
        new_hash = self._metadata_hash(counts)
        if metadata != group.subscription_metadata:
            bump = True
            records.append(cgr.subscription_metadata_record(group_id, metadata))
        if bump or new_hash != group.metadata_hash:
            bump = True
            records.append(cgr.group_epoch_record(group_id, group.group_epoch + 1, new_hash))
            logger.info("[GroupId %s] Bumped group epoch to %d.", group_id, group.group_epoch + 1)
        try:
            self._write(group_id, records)
        except Refusal:
            pass   # (Kafka logs a failed write of the result; the next heartbeat retries)

    def _static_member(self, group: ConsumerGroup, member_id: str, member_epoch: int,
                       instance_id: str, owned: list | None, create: bool,
                       records: list[tuple[bytes, bytes | None]], classic: bool = False
                       ) -> ConsumerGroupMember:
        """``getOrMaybeSubscribeStaticConsumerGroupMember``: a static member rejoining with a
        new member id replaces its previous incarnation (which must have left with epoch -2)
        and inherits its assignment."""
        existing = group.static_member(instance_id)
        if create:
            if existing is None:
                return group.members.get(member_id) or ConsumerGroupMember(member_id)
            if not classic and not existing.uses_classic_protocol \
                    and existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                raise Refusal(ErrorCode.UNRELEASED_INSTANCE_ID,
                              f"Static member {member_id} with instance id {instance_id} "
                              f"cannot join the group because the instance id is owned by "
                              f"{existing.member_id} member.")
            new = replace(existing, member_id=member_id, member_epoch=0,
                          previous_member_epoch=0)
            # replaceMember: the old member's tombstones, then the new one inheriting its
            # subscription, target and current assignment
            g = group.group_id
            records += [cgr.current_assignment_tombstone(g, existing.member_id),
                        cgr.target_assignment_tombstone(g, existing.member_id),
                        cgr.member_subscription_tombstone(g, existing.member_id),
                        cgr.member_subscription_record(g, new),
                        cgr.target_assignment_record(g, member_id,
                                                     group.target_of(existing.member_id)),
                        cgr.current_assignment_record(g, new)]
            self._owner._timer_impl.cancel(session_key(g, existing.member_id))
            self._owner._timer_impl.cancel(rebalance_key(g, existing.member_id))
            logger.info("[GroupId %s] Static member with instance id %s re-joins the consumer "
                        "group using the consumer protocol. Created a new member %s to replace "
                        "the existing member %s.", g, instance_id, member_id,
                        existing.member_id)
            return new
        if existing is None:
            raise Refusal(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        self._check_not_fenced(existing, member_id, instance_id)
        if not classic:
            self._check_epoch(existing, member_epoch, owned)
        return existing

    @staticmethod
    def _check_not_fenced(existing: ConsumerGroupMember, member_id: str,
                          instance_id: str) -> None:
        """``throwIfInstanceIdIsFenced``."""
        if existing.member_id != member_id:
            raise Refusal(ErrorCode.FENCED_INSTANCE_ID,
                          f"Static member {member_id} with instance id {instance_id} was "
                          f"fenced by member {existing.member_id}.")

    @staticmethod
    def _check_epoch(member: ConsumerGroupMember, received: int, owned: list | None) -> None:
        """``throwIfConsumerGroupMemberEpochIsInvalid``. Epoch 0 is a member rejoining with its
        id after it was fenced (KIP-1082 keeps the id): accepted, as Kafka does since
        KAFKA-19233 (apache/kafka#21305); before that fix such a member was fenced again until
        its session expired."""
        if received == 0:
            return
        if received > member.member_epoch:
            raise Refusal(ErrorCode.FENCED_MEMBER_EPOCH,
                          f"The consumer group member has a greater member epoch ({received}) "
                          f"than the one known by the group coordinator "
                          f"({member.member_epoch}). The member must abandon all its "
                          f"partitions and rejoin.")
        if received < member.member_epoch:
            subset = owned is not None and all(
                set(ps) <= member.assigned_partitions.get(t, frozenset()) for t, ps in owned)
            if received != member.previous_member_epoch or not subset:
                raise Refusal(ErrorCode.FENCED_MEMBER_EPOCH,
                              f"The consumer group member has a smaller member epoch "
                              f"({received}) than the one known by the group coordinator "
                              f"({member.member_epoch}). The member must abandon all its "
                              f"partitions and rejoin.")

    def _subscription_metadata(self, subscribed: Mapping[str, int]) -> dict[str, TopicMetadata]:
        """``computeSubscriptionMetadata``: the subscribed topics that exist."""
        out = {}
        for name in subscribed:
            known = self._topics.get(name)
            if known is not None:
                out[name] = TopicMetadata(known[0], name, known[1])
        return out

    def _metadata_hash(self, subscribed: Iterable[str] | Mapping[str, int]) -> int:
        """KIP-1101's hash of the subscribed topics that exist (``computeMetadataHash``; a
        mapping's topics with a count of 0 are not subscribed)."""
        if isinstance(subscribed, Mapping):
            subscribed = [t for t, n in subscribed.items() if n > 0]
        return self._topic_hashes.group_hash(subscribed)

    def _update_target_assignment(self, group: ConsumerGroup, group_epoch: int,
                                  member: ConsumerGroupMember | None,
                                  updated: ConsumerGroupMember | None,
                                  metadata: Mapping[str, TopicMetadata],
                                  records: list[tuple[bytes, bytes | None]],
                                  removed: str | None = None) -> dict[str, frozenset[int]]:
        """``updateTargetAssignment`` + ``TargetAssignmentBuilder.build``: the new target of
        every member, records for those that changed, then the assignment epoch."""
        name = group.preferred_server_assignor(member, updated) or "uniform"
        members = dict(group.members)
        if updated is not None:
            members[updated.member_id] = updated
        if removed is not None:
            members.pop(removed, None)
        by_id = {m.topic_id: m for m in metadata.values()}
        subscriptions = {mid: sorted(t for t in group.member_topics(m) if t in metadata)
                         for mid, m in members.items()}
        # each member's current target is what the assignor keeps what it can of (a static
        # member's replacement starts from its predecessor's)
        owned = {mid: [(by_id[t].name, p) for t, ps in group.target_of(mid, m.instance_id)
                       .items() if t in by_id for p in sorted(ps)] for mid, m in members.items()}
        try:
            result = assign(CONSUMER_GROUP_ASSIGNORS[name], subscriptions,
                            {t: m.num_partitions for t, m in metadata.items()}, owned=owned,
                            topic_ids={t: m.topic_id for t, m in metadata.items()})
        except KafkaLogError as e:
            raise Refusal(ErrorCode.UNKNOWN_SERVER_ERROR,
                          f"Failed to compute a new target assignment for epoch "
                          f"{group_epoch}: {e}") from None
        new_targets: dict[str, dict[str, frozenset[int]]] = {}
        for mid, parts in result.items():
            by_topic: dict[str, set[int]] = {}
            for t, p in parts:
                by_topic.setdefault(metadata[t].topic_id, set()).add(p)
            new_targets[mid] = {t: frozenset(ps) for t, ps in by_topic.items()}
        for mid in members:
            target = new_targets.get(mid, {})
            if group.target_assignment.get(mid) != target:
                records.append(cgr.target_assignment_record(group.group_id, mid, target))
        records.append(cgr.target_assignment_epoch_record(group.group_id, group_epoch))
        logger.info("[GroupId %s] Computed a new target assignment for epoch %d with '%s' "
                    "assignor.", group.group_id, group_epoch, name)
        return new_targets.get(updated.member_id, {}) if updated is not None else {}

    # -- leaving and fencing ------------------------------------------------------------------

    def _leave(self, group_id: str, member_id: str, member_epoch: int,
               instance_id: str | None) -> ConsumerGroupHeartbeatResponse:
        """``consumerGroupLeave``: a member leaving (-1) is removed; a static member leaving
        temporarily (-2) keeps its partitions at epoch -2 until it rejoins under a new member
        id or its session expires."""
        group = self.group(group_id)
        if group is None:
            raise Refusal(ErrorCode.GROUP_ID_NOT_FOUND,
                          f"Group {group_id} not found." if self._owner._get_group(group_id)
                          is None else f"Group {group_id} is not a consumer group")
        response = ConsumerGroupHeartbeatResponse(member_id=member_id, member_epoch=member_epoch)
        if instance_id is None:
            if member_id not in group.members:
                raise Refusal(ErrorCode.UNKNOWN_MEMBER_ID,
                              f"Member {member_id} is not a member of group {group_id}.")
            logger.info("[GroupId %s] Member %s left the consumer group.", group_id, member_id)
            self._fence(group, member_id)
            return response
        member = group.static_member(instance_id)
        if member is None:
            raise Refusal(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        self._check_not_fenced(member, member_id, instance_id)
        if member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            logger.info("[GroupId %s] Static Member %s with instance id %s temporarily left the "
                        "consumer group.", group_id, member_id, instance_id)
            self._write(group_id, [cgr.current_assignment_record(group_id, replace(
                member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                partitions_pending_revocation={}))])
            return response
        logger.info("[GroupId %s] Static Member %s with instance id %s left the consumer "
                    "group.", group_id, member_id, instance_id)
        self._fence(group, member.member_id)
        return response

    def _fence(self, group: ConsumerGroup, member_id: str) -> None:
        """``consumerGroupFenceMember``: tombstones of the member, new subscription metadata,
        a group epoch bump (the next heartbeat computes the new target assignment); or, when
        only classic-protocol members remain, the group back to a classic group."""
        group_id = group.group_id
        if self._maybe_downgrade(group, member_id):
            return
        member = group.members[member_id]
        records = [cgr.current_assignment_tombstone(group_id, member_id),
                   cgr.target_assignment_tombstone(group_id, member_id),
                   cgr.member_subscription_tombstone(group_id, member_id)]
        subscribed = group.subscribed_topics_with(member, None)
        metadata = self._subscription_metadata(subscribed)
        if metadata != group.subscription_metadata:
            records.append(cgr.subscription_metadata_record(group_id, metadata))
        records.append(cgr.group_epoch_record(group_id, group.group_epoch + 1,
                                              self._metadata_hash(subscribed)))
        self._write(group_id, records)
        self._cancel_member_timers(group_id, member_id)

    def _fence_by_timer(self, group_id: str, member_id: str, reason: str,
                        epoch: int | None = None) -> None:
        group = self.group(group_id)
        if group is None or member_id not in group.members:
            return
        if epoch is not None and group.members[member_id].member_epoch != epoch:
            return  # the member moved on from the epoch the timer was armed for
        logger.info("[GroupId %s] Member %s fenced from the group because %s", group_id,
                    member_id, reason)
        try:
            self._fence(group, member_id)
        except Refusal:
            pass

    def _schedule_session_timeout(self, group_id: str, member_id: str) -> None:
        self._owner._timer_impl.schedule(
            session_key(group_id, member_id),
            self._owner.consumer_timeouts(group_id)[0],
            lambda: self._fence_by_timer(group_id, member_id, "the member session expired."))

    def _schedule_rebalance_timeout(self, group_id: str, member_id: str, epoch: int,
                                    timeout_ms: int) -> None:
        self._owner._timer_impl.schedule(
            rebalance_key(group_id, member_id), max(0, timeout_ms),
            lambda: self._fence_by_timer(
                group_id, member_id, f"it failed to transition from epoch {epoch} within "
                f"{timeout_ms}ms.", epoch))

    # -- offsets, admin -------------------------------------------------------------------------

    def validate_offset_commit(self, group: ConsumerGroup, member_id: str, member_epoch: int,
                               transactional: bool, api_version: int) -> int:
        """``ConsumerGroup.validateOffsetCommit``: an error code (NONE when accepted)."""
        if member_epoch < 0 and not group.members:
            return ErrorCode.NONE
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if not transactional and not member.uses_classic_protocol and api_version < 9:
            return ErrorCode.UNSUPPORTED_VERSION
        return self._check_member_epoch(member, member_epoch)

    @staticmethod
    def _check_member_epoch(member: ConsumerGroupMember, received: int) -> int:
        """``validateMemberEpoch``: a classic member's generation is its member epoch."""
        if received == member.member_epoch:
            return ErrorCode.NONE
        return ErrorCode.ILLEGAL_GENERATION if member.uses_classic_protocol \
            else ErrorCode.STALE_MEMBER_EPOCH

    @staticmethod
    def validate_offset_fetch(group: ConsumerGroup, member_id: str | None,
                              member_epoch: int) -> int:
        """``ConsumerGroup.validateOffsetFetch``."""
        if member_id is None and member_epoch < 0:
            return ErrorCode.NONE
        member = group.members.get(member_id or "")
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return ConsumerGroupCoordinator._check_member_epoch(member, member_epoch)

    def describe(self, group_id: str) -> ConsumerGroupDescribedGroup:
        """ConsumerGroupDescribe of one group."""
        if not self._owner.manager.owns(group_id):
            return ConsumerGroupDescribedGroup(group_id, ErrorCode.NOT_COORDINATOR)
        group = self.group(group_id)
        if group is None:
            exists = self._owner._get_group(group_id) is not None
            return ConsumerGroupDescribedGroup(
                group_id, ErrorCode.GROUP_ID_NOT_FOUND,
                f"Group {group_id} is not a consumer group." if exists
                else f"Group {group_id} not found.")
        names = {m.topic_id: t for t, m in group.subscription_metadata.items()}
        names.update({tid: t for t, (tid, _) in self._topics.items() if tid not in names})

        def described(a: Mapping[str, frozenset[int]]) -> list[DescribedTopicPartitions]:
            return [DescribedTopicPartitions(t, names.get(t, ""), ps)
                    for t, ps in assignment_to_list(a)]

        members = [ConsumerGroupDescribedMember(
            m.member_id, m.instance_id, m.rack_id, m.member_epoch, m.client_id, m.client_host,
            sorted(m.subscribed_topic_names), m.subscribed_topic_regex,
            described(m.assigned_partitions), described(group.target_assignment.get(mid, {})))
            for mid, m in group.members.items()]
        return ConsumerGroupDescribedGroup(
            group_id, ErrorCode.NONE, None, group.state.capitalize(), group.group_epoch,
            group.assignment_epoch, group.preferred_server_assignor(None, None) or "uniform",
            members)

