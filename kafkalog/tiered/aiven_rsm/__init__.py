"""Remote segments as Aiven's tiered storage plugin stores them (tiered-storage-for-apache-kafka,
the most used open-source ``RemoteStorageManager``), read back into Kafka's own files.

* :mod:`.manifest`: the ``.rsm-manifest`` object (chunks, index positions, codec, key);
* :mod:`.detransform`: chunks and indexes decrypted and decompressed;
* :mod:`.restore`: objects copied out of the bucket -> partition directories that every kafkalog
  tool (and a Kafka broker) reads;
* :mod:`.lineage_plan`: which segments to restore: those in their partition's leader-epoch
  lineage (a divergent leader's uploads after an unclean election are skipped, as Kafka does);
* :mod:`.command`: ``kafkalog tiered-restore``.
"""

from .detransform import DataKey, decrypt_data_key, iter_chunks, load_private_key, read_index
from .manifest import RemoteSegmentError, SegmentManifest, parse_manifest

__all__ = ["DataKey", "RemoteSegmentError", "SegmentManifest", "decrypt_data_key",
           "iter_chunks", "load_private_key", "parse_manifest", "read_index"]
