#!/usr/bin/env node
// kafkajs_peer: a command-line Kafka client built on kafkajs 2.2.4 (pure JavaScript: its own
// protocol code, RecordBatch encoder and decoder, consumer groups, idempotent and transactional
// producer), so that the tests check kafkalog against a client whose code shares nothing with
// kafkalog's, kafka-python's, aiokafka's, librdkafka's or sarama's.
//
// Installed by tests/server/test_kafkajs.py (npm ci in a temporary directory). Records cross
// stdin and stdout as JSON lines, bytes in base64 (null for a null key or value), headers as
// [key, base64] pairs in order:
//
//   produce --broker B --topic T [--codec C] [--idempotent] [--acks all|1] [--chunk N]
//           < {"p","k","v","h","ts"} lines; one send() per N input lines (one batch per
//           partition per send)
//           > {"i": input line, "p", "o": offset, "base": the batch's base offset} per record,
//             in input order, then {"compressed": [sha256 of each payload the codec produced]}
//   consume --broker B --topic T --n N [--group G] [--read-uncommitted] [--timeout-ms MS]
//           reads from the beginning (a fresh group, nothing committed, unless --group: then
//           it commits) until N records came, > {"p","o","k","v","h","ts"} sorted by p, o
//   group   --broker B --group G --topics T1,T2 [--commit-interval-ms MS]
//           a member until stdin closes; > {"event": "join"|"rebalancing"|"msg"|"commit"|
//           "crash"|"closed", ...}
//   txn     --broker B --transactional-id X [--codec C]
//           < one transaction per line: {"records": [{"topic","p","k","v","h","ts"}],
//             "offsets": {"group": G, "topics": {T: {P: offset}}} (sendOffsets, optional),
//             "end": "commit"|"abort"}
//           > {"txn": i, "end", "acks": [{"topic","p","o"}]} per transaction
//   admin   --broker B  < {"op": admin method, "args": {...} or [positional, ...]} per line
//           > {"op", "result"} or {"op", "error", "type"} per line (Buffers in base64; a
//             consumer group's member metadata and assignments also decoded by kafkajs)
//
// Codecs: gzip is kafkajs's own (node's zlib). snappy is kafkajs-snappy (snappyjs: raw snappy
// out, raw or xerial-framed in). lz4 and zstd are the small codecs below, over lz4js (pure JS
// LZ4 blocks) and zstd-codec (libzstd compiled to wasm): lz4js's own frame writer does not set
// the block-independence flag, which Kafka requires ("Dependent block stream is unsupported").
'use strict'

// the partition of every record is given: kafkajs's default-partitioner notice is noise
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'

const crypto = require('crypto')
const readline = require('readline')
const {
  Kafka,
  CompressionTypes,
  CompressionCodecs,
  PartitionAssigners,
  AssignerProtocol,
  logLevel,
} = require('kafkajs')

// -- codecs ----------------------------------------------------------------------------------

const lz4 = require('lz4js')
const xxh32 = require('lz4js/xxh32').hash

const LZ4_MAGIC = 0x184d2204
const LZ4_FLG = 0x60 // version 01, independent blocks, no checksums but the header's
const LZ4_BD = 0x40 // 64 KiB blocks, as Kafka's producer writes them
const LZ4_UNCOMPRESSED = 0x80000000
const LZ4_BLOCK_SIZES = { 4: 1 << 16, 5: 1 << 18, 6: 1 << 20, 7: 1 << 22 }

// One LZ4 frame as Kafka's Lz4BlockOutputStream writes it (magic, FLG, BD, header checksum,
// independent blocks each compressed with a fresh hash table, end mark).
function lz4Compress(src) {
  const parts = []
  const header = Buffer.alloc(7)
  header.writeUInt32LE(LZ4_MAGIC, 0)
  header[4] = LZ4_FLG
  header[5] = LZ4_BD
  header[6] = (xxh32(0, header, 4, 2) >>> 8) & 0xff
  parts.push(header)
  const blockSize = LZ4_BLOCK_SIZES[LZ4_BD >> 4]
  for (let pos = 0; pos < src.length; pos += blockSize) {
    const block = src.subarray(pos, Math.min(pos + blockSize, src.length))
    const out = Buffer.alloc(lz4.compressBound(block.length))
    const n = lz4.compressBlock(block, out, 0, block.length, new Uint32Array(1 << 16))
    const size = Buffer.alloc(4)
    if (n === 0 || n >= block.length) {
      size.writeUInt32LE((LZ4_UNCOMPRESSED | block.length) >>> 0, 0)
      parts.push(size, Buffer.from(block))
    } else {
      size.writeUInt32LE(n, 0)
      parts.push(size, out.subarray(0, n))
    }
  }
  parts.push(Buffer.alloc(4)) // end mark
  return Buffer.concat(parts)
}

// Any LZ4 frame with independent blocks (optional content size, block and content checksums).
function lz4Decompress(buf) {
  if (buf.length < 7 || buf.readUInt32LE(0) !== LZ4_MAGIC) throw new Error('lz4: bad frame magic')
  const flg = buf[4]
  const bd = buf[5]
  if (flg >> 6 !== 1) throw new Error(`lz4: unsupported frame version (FLG ${flg})`)
  if (!(flg & 0x20)) throw new Error('lz4: dependent blocks are unsupported')
  const maxBlock = LZ4_BLOCK_SIZES[(bd >> 4) & 7]
  if (!maxBlock) throw new Error(`lz4: bad block size code (BD ${bd})`)
  let pos = 6 + (flg & 0x08 ? 8 : 0)
  if (buf[pos] !== ((xxh32(0, buf, 4, pos - 4) >>> 8) & 0xff)) {
    throw new Error('lz4: header checksum mismatch')
  }
  pos += 1
  const out = []
  for (;;) {
    const word = buf.readUInt32LE(pos)
    pos += 4
    if (word === 0) break
    const size = (word & ~LZ4_UNCOMPRESSED) >>> 0
    if (size > maxBlock || pos + size > buf.length) throw new Error('lz4: bad block size')
    if (word & LZ4_UNCOMPRESSED) {
      out.push(buf.subarray(pos, pos + size))
    } else {
      const dst = Buffer.alloc(maxBlock)
      const n = lz4.decompressBlock(buf, dst, pos, size, 0)
      out.push(dst.subarray(0, n))
    }
    pos += size + (flg & 0x10 ? 4 : 0)
  }
  const data = Buffer.concat(out)
  if (flg & 0x04 && buf.readUInt32LE(pos) !== xxh32(0, data, 0, data.length)) {
    throw new Error('lz4: content checksum mismatch')
  }
  return data
}

let zstdApi = null
function zstd() {
  if (zstdApi === null) {
    zstdApi = new Promise(resolve => {
      require('zstd-codec').ZstdCodec.run(z => resolve(new z.Streaming()))
    })
  }
  return zstdApi
}

// The payloads the codecs produced, so that the test can check the server stored them as sent.
const compressedDigests = []

function recorded(codec) {
  return () => ({
    async compress(encoder) {
      const out = Buffer.from(await codec.compress(encoder.buffer))
      compressedDigests.push(crypto.createHash('sha256').update(out).digest('hex'))
      return out
    },
    async decompress(buffer) {
      return Buffer.from(await codec.decompress(buffer))
    },
  })
}

const gzipCodec = CompressionCodecs[CompressionTypes.GZIP]()
const snappyCodec = require('kafkajs-snappy')()
CompressionCodecs[CompressionTypes.GZIP] = recorded({
  compress: data => gzipCodec.compress({ buffer: data }),
  decompress: buf => gzipCodec.decompress(buf),
})
CompressionCodecs[CompressionTypes.Snappy] = recorded({
  compress: data => snappyCodec.compress({ buffer: data }),
  decompress: buf => snappyCodec.decompress(buf),
})
CompressionCodecs[CompressionTypes.LZ4] = recorded({
  compress: async data => lz4Compress(data),
  decompress: async buf => lz4Decompress(buf),
})
CompressionCodecs[CompressionTypes.ZSTD] = recorded({
  compress: async data => (await zstd()).compress(data, 3),
  // streaming: Kafka's producers write frames without a content size
  decompress: async buf => (await zstd()).decompress(buf),
})

const CODECS = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
}

// -- plumbing --------------------------------------------------------------------------------

// Exit once stdout and stderr are flushed: writes to a pipe are asynchronous, and
// process.exit() would drop what is still queued.
let exiting = false
function exit(code) {
  if (exiting) return
  exiting = true
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)))
}

function die(message) {
  process.stderr.write(`kafkajs_peer: ${message}\n`)
  exit(1)
}

class PeerError extends Error {}

function fail(message) {
  throw new PeerError(message)
}

function parseArgs(argv) {
  const out = {}
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i].startsWith('--')) fail(`unexpected argument ${argv[i]}`)
    const name = argv[i].slice(2)
    if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) {
      out[name] = argv[++i]
    } else {
      out[name] = true
    }
  }
  return out
}

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n')
}

const b64 = b => (b === null || b === undefined ? null : Buffer.from(b).toString('base64'))
const unb64 = s => (s === null || s === undefined ? null : Buffer.from(s, 'base64'))

function codecOf(name) {
  const c = CODECS[name || 'none']
  if (c === undefined) fail(`unknown codec ${name}`)
  return c
}

function kafka(args, clientId) {
  if (!args.broker) fail('--broker is required')
  return new Kafka({
    clientId,
    brokers: [args.broker],
    logLevel: logLevel.WARN,
    // kafkajs logs to the console (stdout) by default: stdout carries the JSON lines
    logCreator:
      () =>
      ({ namespace, label, log }) => {
        const { message, ...extra } = log
        process.stderr.write(`[${label}] ${namespace}: ${message} ${JSON.stringify(extra)}\n`)
      },
    retry: { initialRetryTime: 100, retries: 8 },
  })
}

async function readLines() {
  const lines = []
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of rl) {
    if (line.trim()) lines.push(JSON.parse(line))
  }
  return lines
}

function toMessage(r) {
  const headers = Object.create(null) // any header key, "__proto__" included
  for (const [k, v] of r.h || []) {
    const value = unb64(v)
    if (Object.prototype.hasOwnProperty.call(headers, k)) {
      headers[k] = [].concat(headers[k], value)
    } else {
      headers[k] = value
    }
  }
  const m = { partition: r.p, key: unb64(r.k), value: unb64(r.v), headers }
  if (r.ts) m.timestamp = String(r.ts)
  return m
}

function fromMessage(partition, m) {
  const headers = []
  for (const [k, v] of Object.entries(m.headers || {})) {
    for (const one of [].concat(v)) headers.push([k, b64(one)])
  }
  return {
    p: partition,
    o: Number(m.offset),
    k: b64(m.key),
    v: b64(m.value),
    h: headers,
    ts: Number(m.timestamp),
  }
}

function withDeadline(promise, ms, what) {
  let timer
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what()}`)), ms)
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}

// -- commands --------------------------------------------------------------------------------

async function produce(args) {
  const lines = await readLines()
  const idempotent = Boolean(args.idempotent)
  const producer = kafka(args, 'kafkajs-peer-producer').producer({
    idempotent,
    maxInFlightRequests: idempotent ? 1 : undefined,
    allowAutoTopicCreation: false,
  })
  await producer.connect()
  const compression = codecOf(args.codec)
  const acks = args.acks === '1' ? 1 : -1
  const chunk = Number(args.chunk || 300)
  const out = []
  for (let start = 0; start < lines.length; start += chunk) {
    const part = lines.slice(start, start + chunk)
    const results = await producer.send({
      topic: args.topic,
      messages: part.map(toMessage),
      acks,
      compression,
    })
    const base = {}
    for (const r of results) {
      if (r.errorCode !== 0) fail(`partition ${r.partition}: error ${r.errorCode}`)
      base[r.partition] = Number(r.baseOffset)
    }
    const next = { ...base }
    part.forEach((r, j) => {
      out.push({ i: start + j, p: r.p, o: next[r.p]++, base: base[r.p] })
    })
  }
  await producer.disconnect()
  out.forEach(emit)
  emit({ compressed: compressedDigests })
}

async function consume(args) {
  const n = Number(args.n)
  const group = args.group || `kafkajs-peer-${crypto.randomUUID()}`
  const consumer = kafka(args, 'kafkajs-peer-consumer').consumer({
    groupId: group,
    readUncommitted: Boolean(args['read-uncommitted']),
    maxWaitTimeInMs: 200,
    allowAutoTopicCreation: false,
  })
  await consumer.connect()
  await consumer.subscribe({ topics: [args.topic], fromBeginning: true })
  const got = []
  let done, crashed
  const finished = new Promise((resolve, reject) => {
    done = resolve
    crashed = reject
  })
  if (n === 0) done()
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (!payload.restart) crashed(payload.error)
  })
  await consumer.run({
    autoCommit: Boolean(args.group),
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) got.push(fromMessage(batch.partition, m))
      if (got.length >= n) done()
    },
  })
  await withDeadline(finished, Number(args['timeout-ms'] || 60000),
    () => `${got.length} of ${n} records`)
  await consumer.disconnect()
  got.sort((a, b) => a.p - b.p || a.o - b.o)
  got.forEach(emit)
}

async function group(args) {
  const consumer = kafka(args, 'kafkajs-peer-group').consumer({
    groupId: args.group,
    partitionAssigners: [PartitionAssigners.roundRobin],
    sessionTimeout: 10000,
    rebalanceTimeout: 20000,
    heartbeatInterval: 300,
    maxWaitTimeInMs: 200,
    allowAutoTopicCreation: false,
  })
  const { GROUP_JOIN, REBALANCING, COMMIT_OFFSETS, CRASH } = consumer.events
  consumer.on(GROUP_JOIN, ({ payload }) =>
    emit({
      event: 'join',
      member: payload.memberId,
      leader: payload.leaderId,
      is_leader: payload.isLeader,
      protocol: payload.groupProtocol,
      assignment: payload.memberAssignment,
    })
  )
  consumer.on(REBALANCING, ({ payload }) => emit({ event: 'rebalancing', member: payload.memberId }))
  consumer.on(COMMIT_OFFSETS, ({ payload }) =>
    emit({ event: 'commit', member: payload.memberId, topics: payload.topics })
  )
  consumer.on(CRASH, ({ payload }) =>
    emit({ event: 'crash', error: String(payload.error), restart: payload.restart })
  )
  await consumer.connect()
  await consumer.subscribe({ topics: args.topics.split(','), fromBeginning: true })
  await consumer.run({
    autoCommitInterval: args['commit-interval-ms'] ? Number(args['commit-interval-ms']) : null,
    eachMessage: async ({ topic, partition, message }) => {
      const r = fromMessage(partition, message)
      emit({ event: 'msg', topic, p: partition, o: r.o, v: r.v })
    },
  })
  // stdin closing is the test's signal to leave: commit, then LeaveGroup
  process.stdin.resume()
  await new Promise(resolve => process.stdin.on('end', resolve))
  await consumer.disconnect()
  emit({ event: 'closed' })
}

async function txn(args) {
  const lines = await readLines()
  const producer = kafka(args, 'kafkajs-peer-txn').producer({
    transactionalId: args['transactional-id'],
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  })
  await producer.connect()
  const compression = codecOf(args.codec)
  for (const [i, t] of lines.entries()) {
    const transaction = await producer.transaction()
    const byTopic = new Map()
    for (const r of t.records || []) {
      if (!byTopic.has(r.topic)) byTopic.set(r.topic, [])
      byTopic.get(r.topic).push(r)
    }
    const results = await transaction.sendBatch({
      topicMessages: [...byTopic].map(([topic, rs]) => ({ topic, messages: rs.map(toMessage) })),
      compression,
    })
    const next = {}
    for (const r of results) next[`${r.topicName}/${r.partition}`] = Number(r.baseOffset)
    const acks = (t.records || []).map(r => ({ topic: r.topic, p: r.p, o: next[`${r.topic}/${r.p}`]++ }))
    if (t.offsets) {
      await transaction.sendOffsets({
        consumerGroupId: t.offsets.group,
        topics: Object.entries(t.offsets.topics).map(([topic, ps]) => ({
          topic,
          partitions: Object.entries(ps).map(([p, o]) => ({ partition: Number(p), offset: String(o) })),
        })),
      })
    }
    if (t.end === 'abort') {
      await transaction.abort()
    } else {
      await transaction.commit()
    }
    emit({ txn: i, end: t.end || 'commit', acks })
  }
  await producer.disconnect()
}

// Buffers in base64, Longs and BigInts as strings: JSON-safe.
function plain(v) {
  if (Buffer.isBuffer(v)) return b64(v)
  if (Array.isArray(v)) return v.map(plain)
  if (typeof v === 'bigint') return String(v)
  if (v && typeof v === 'object') {
    if (typeof v.toString === 'function' && v.constructor && v.constructor.name === 'Long') {
      return v.toString()
    }
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]))
  }
  return v
}

async function admin(args) {
  const ops = await readLines()
  const a = kafka(args, 'kafkajs-peer-admin').admin()
  await a.connect()
  for (const { op, args: opArgs } of ops) {
    if (typeof a[op] !== 'function') fail(`unknown admin operation ${op}`)
    try {
      const result = await (Array.isArray(opArgs) ? a[op](...opArgs) : a[op](opArgs || {}))
      if (op === 'describeGroups') {
        // the consumer protocol's member metadata and assignments, decoded by kafkajs
        for (const g of result.groups) {
          for (const m of g.members) {
            if (g.protocolType !== 'consumer') continue
            const meta = AssignerProtocol.MemberMetadata.decode(m.memberMetadata)
            const asg = AssignerProtocol.MemberAssignment.decode(m.memberAssignment)
            m.subscription = meta ? meta.topics : null
            m.assignment = asg ? asg.assignment : null
          }
        }
      }
      emit({ op, result: plain(result === undefined ? null : result) })
    } catch (e) {
      emit({ op, error: e.message, type: e.type || e.name })
    }
  }
  await a.disconnect()
}

const COMMANDS = { produce, consume, group, txn, admin }

async function main() {
  const [command, ...rest] = process.argv.slice(2)
  if (!COMMANDS[command]) fail(`usage: peer.js ${Object.keys(COMMANDS).join('|')} --broker B ...`)
  await COMMANDS[command](parseArgs(rest))
}

main().then(
  () => exit(0),
  e => die(e instanceof PeerError ? e.message : e && e.stack ? e.stack : String(e))
)
