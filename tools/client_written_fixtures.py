"""Regenerate tests/golden/client_written: segments real clients wrote, through ``kafkalog
serve``, with their own compressors.

Each client produces the same records (:func:`records`: compressible JSON-like values, keys
some null, 0-3 headers, timestamps ``TS0 + i``) into one partition per codec of its own topic;
the server stores their batches as sent (offsets assigned in place, never re-encoded), so each
``<client>-<partition>/00000000000000000000.log`` holds the client's bytes: sarama's Go codecs
(compress/gzip, golang/snappy xerial framing, pierrec/lz4, DataDog/zstd), kafkajs's (node's
zlib, snappyjs raw snappy, the peer's LZ4 frames over lz4js, zstd-codec's wasm libzstd),
librdkafka's and aiokafka's. ``expected.json`` names each partition's client and the codec it
was asked for, and lists the records as every client was given them; each client was told
offsets 0 to N - 1, in order (checked here).

Run from the repository root (needs the Go toolchain with Debian's sarama sources, node/npm,
confluent-kafka and aiokafka; see tools/ci/install-system-deps.sh)::

    .venv/bin/python tools/client_written_fixtures.py [--out tests/golden/client_written]

The tests read the files (tests/test_client_written_fixtures.py, tests/spark/test_spark_jvm.py)
and need none of those clients.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kafkalog.server import KafkaServer, ServerConfig  # noqa: E402

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
N = 150
TS0 = 1_700_000_000_000
CLIENTS = ["sarama", "kafkajs", "librdkafka", "aiokafka"]
WORDS = ("offset", "segment", "batch", "record", "leader", "epoch", "index", "compaction")


def records() -> list[tuple[bytes | None, bytes, list[tuple[str, bytes]]]]:
    """The records every client sends: compressible values (the compressors find matches)."""
    out = []
    for i in range(N):
        key = None if i % 11 == 0 else f"key-{i % 37}".encode()
        text = " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(i % 40))
        value = json.dumps({"n": i, "text": text, "pad": "x" * (i % 13)}).encode()
        headers = [(f"h{j}", f"{i}:{j}".encode()) for j in range(i % 4)]
        out.append((key, value, headers))
    return out


def _b64(b: bytes | None) -> str | None:
    return None if b is None else base64.b64encode(b).decode()


def _lines(partition: int) -> str:
    return "".join(json.dumps({"p": partition, "k": _b64(k), "v": _b64(v),
                               "h": [[hk, _b64(hv)] for hk, hv in h], "ts": TS0 + i}) + "\n"
                   for i, (k, v, h) in enumerate(records()))


def _run(argv: list[str], stdin: str, cwd: Path | None = None) -> list[dict]:
    r = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=300,
                       cwd=cwd)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{r.stderr}")
    return [json.loads(line) for line in r.stdout.splitlines()]


def produce_sarama(address: str, work: Path) -> dict[int, list[int]]:
    binary = work / "sarama_peer"
    env = {**os.environ, "GO111MODULE": "off", "GOPATH": "/usr/share/gocode",
           "GOCACHE": str(work / "gocache")}
    subprocess.run(["go", "build", "-o", str(binary), "."], env=env, check=True,
                   cwd=ROOT / "tests" / "server" / "sarama_peer", capture_output=True)
    out = {}
    for p, codec in enumerate(CODECS):
        acks = _run([str(binary), "produce", "-broker", address, "-topic", "sarama", "-codec",
                     codec, "-batch", "40"], _lines(p))
        out[p] = [a["o"] for a in acks]
    return out


def produce_kafkajs(address: str, work: Path) -> dict[int, list[int]]:
    peer = work / "kafkajs"
    peer.mkdir()
    for name in ("package.json", "package-lock.json", "peer.js"):
        shutil.copy(ROOT / "tests" / "server" / "kafkajs_peer" / name, peer / name)
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=peer, check=True,
                   capture_output=True)
    out = {}
    for p, codec in enumerate(CODECS):
        acks = _run(["node", str(peer / "peer.js"), "produce", "--broker", address, "--topic",
                     "kafkajs", "--codec", codec, "--chunk", "40"], _lines(p))[:-1]
        out[p] = [a["o"] for a in acks]
    return out


def produce_librdkafka(address: str, work: Path) -> dict[int, list[int]]:
    import confluent_kafka as ck

    out: dict[int, list[int]] = {}
    for p, codec in enumerate(CODECS):
        prod = ck.Producer({"bootstrap.servers": address, "compression.type": codec,
                            "linger.ms": 50, "batch.num.messages": 40})
        offsets: list[int] = [-1] * N

        def done(err: object, msg: object, i: int, offsets: list[int] = offsets) -> None:
            if err is not None:
                raise SystemExit(f"librdkafka: {err}")
            offsets[i] = msg.offset()  # type: ignore[attr-defined]

        for i, (k, v, h) in enumerate(records()):
            prod.produce("librdkafka", value=v, key=k, partition=p, timestamp=TS0 + i,
                         headers=h, on_delivery=lambda e, m, i=i: done(e, m, i))
        prod.flush(60)
        out[p] = offsets
    return out


def produce_aiokafka(address: str, work: Path) -> dict[int, list[int]]:
    from aiokafka import AIOKafkaProducer

    async def run() -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for p, codec in enumerate(CODECS):
            prod = AIOKafkaProducer(bootstrap_servers=address, linger_ms=50,
                                    max_batch_size=4096,
                                    compression_type=None if codec == "none" else codec)
            await prod.start()
            try:
                futs = [await prod.send("aiokafka", value=v, key=k, partition=p,
                                        timestamp_ms=TS0 + i, headers=h)
                        for i, (k, v, h) in enumerate(records())]
                out[p] = [(await f).offset for f in futs]
            finally:
                await prod.stop()
        return out

    return asyncio.run(run())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "golden" / "client_written")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="kafkalog-client-fixtures-"))
    logs = work / "logs"
    server = KafkaServer(logs, "127.0.0.1", 0, config=ServerConfig(
        offsets_topic_num_partitions=1, transaction_state_num_partitions=1)).start()
    expected: dict[str, dict] = {}
    try:
        for client in CLIENTS:
            server.broker.create_topic(client, len(CODECS))
            offsets = globals()[f"produce_{client}"](server.address, work)
            for p, codec in enumerate(CODECS):
                assert offsets[p] == list(range(N)), (client, codec, offsets[p][:5])
                expected[f"{client}-{p}"] = {"client": client, "codec": codec}
    finally:
        server.stop()
    if args.out.exists():
        shutil.rmtree(args.out)
    for name in expected:
        (args.out / name).mkdir(parents=True)
        shutil.copy(logs / name / "00000000000000000000.log", args.out / name)
    versions = {"sarama": "1.22.1 (Debian golang-github-shopify-sarama-dev)",
                "kafkajs": "2.2.4 (npm; codecs: see tests/server/kafkajs_peer/package.json)",
                "librdkafka": "confluent-kafka " + metadata.version("confluent-kafka"),
                "aiokafka": metadata.version("aiokafka")}
    (args.out / "expected.json").write_text(json.dumps(
        {"generator": "tools/client_written_fixtures.py", "clients": versions,
         "partitions": expected,
         "records": [{"offset": i, "timestamp": TS0 + i, "key": _b64(k), "value": _b64(v),
                      "headers": [[hk, _b64(hv)] for hk, hv in h]}
                     for i, (k, v, h) in enumerate(records())]}, indent=1) + "\n")
    print(f"wrote {len(expected)} partitions to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
