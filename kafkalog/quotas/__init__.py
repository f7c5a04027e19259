"""Client quotas: what a broker stores per user / client id / ip and how it throttles.

=====================================  ===========================================================
:mod:`~kafkalog.quotas.client_quota_store`    the quotas of a log-dir tree (kafka-configs.sh's
                                               users/clients/ips, AlterClientQuotas and
                                               DescribeClientQuotas), persisted at its root
:mod:`~kafkalog.quotas.client_quota_manager`  Kafka's ClientQuotaManager: which quota applies to
                                               a request and how long its client is throttled
:mod:`~kafkalog.quotas.sampled_rate`          Kafka's windowed Rate and QuotaUtils.throttleTime
=====================================  ===========================================================

Nothing here does I/O but the store's file; the server (``kafkalog.server``) feeds the managers
from the store and applies their throttle times to produce and fetch responses.
"""

from .client_quota_manager import ABSENT, ClientQuotaManager
from .client_quota_store import (
    CLIENT_ID,
    CLIENT_QUOTAS_FILE,
    IP,
    USER,
    ClientQuotaStore,
    QuotaRequestError,
    entity_string,
)
from .sampled_rate import SampledRate, throttle_time_ms

__all__ = ["ABSENT", "ClientQuotaManager", "ClientQuotaStore", "QuotaRequestError",
           "SampledRate", "throttle_time_ms", "entity_string", "CLIENT_QUOTAS_FILE", "USER",
           "CLIENT_ID", "IP"]
