#!/usr/bin/env bash
# Installs the Debian packages the test suite runs for real: zookeeper (a standalone server the
# cluster tests start on 127.0.0.1), kcat (a librdkafka command-line client used against
# `kafkalog serve`), the Go toolchain with sarama's sources (tests/server/sarama_peer, a pure-Go
# client built by tests/server/test_sarama.py), burrow (LinkedIn's lag monitor, which decodes
# __consumer_offsets itself) and Node.js with npm (kafkajs, a pure-JavaScript client).
# Idempotent; a no-op where all are present. Without root or apt the tests that need them skip
# and say why.
set -uo pipefail

missing=()
[ -e /usr/share/zookeeper/bin/zkServer.sh ] || [ -d /usr/share/java/zookeeper ] \
  || dpkg -s zookeeper >/dev/null 2>&1 || missing+=(zookeeper)
command -v kcat >/dev/null 2>&1 || missing+=(kcat)
# (gcc and libc6-dev: cgo, for sarama's zstd binding; golang-go only recommends them)
command -v go >/dev/null 2>&1 || missing+=(golang-go gcc libc6-dev)
[ -d /usr/share/gocode/src/github.com/Shopify/sarama ] || missing+=(golang-github-shopify-sarama-dev)
[ -x /usr/bin/Burrow ] || missing+=(burrow)
# node and npm: tests/server/test_kafkajs.py installs kafkajs (pure JavaScript) from npm
command -v node >/dev/null 2>&1 || missing+=(nodejs npm)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-system-deps: cannot install ${missing[*]} (need root and apt-get); tests that need them will skip" >&2
  exit 0
fi
echo "install-system-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
# --no-install-recommends: the zookeeper server jars and a JRE dependency, no daemon set-up needed
# (burrow's and zookeeper's services are not started: no systemd on CI machines, and the tests
# start their own)
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  echo "install-system-deps: apt-get install ${missing[*]} failed; tests that need them will skip" >&2
fi
exit 0
