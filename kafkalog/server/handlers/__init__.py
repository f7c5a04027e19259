"""Request handlers, one module per API family; importing this package registers them all in
:data:`kafkalog.server.api.APIS`."""

from __future__ import annotations

from . import (  # noqa: F401 - imported for their registrations
    acls,
    api_versions,
    client_quotas,
    configs,
    consumer_groups,
    delete_records,
    features,
    fetch,
    find_coordinator,
    groups,
    list_offsets,
    log_dirs,
    metadata,
    offsets_for_leader_epoch,
    produce,
    quorum,
    reassignments,
    security,
    share_groups,
    streams_groups,
    topics,
    transaction_admin,
    transactions,
)
