// sarama_peer: a command-line Kafka client built on Shopify's sarama (pure Go: its own protocol
// code, RecordBatch encoder and decoder, and Go codecs: compress/gzip, golang/snappy with xerial
// framing, pierrec/lz4, DataDog/zstd), so that the tests check kafkalog against a client whose
// code shares nothing with kafkalog's, kafka-python's, aiokafka's or librdkafka's.
//
// Built by tests/server/test_sarama.py from Debian's golang-github-shopify-sarama-dev sources
// (GOPATH mode: GO111MODULE=off GOPATH=/usr/share/gocode). Records cross stdin and stdout as
// JSON lines, bytes in base64 (null for a null key):
//
//	produce  -broker B -topic T -codec C [-idempotent] [-acks all|1] [-batch N]
//	         < {"p","k","v","h","ts"} lines
//	         > {"i": input line, "p": partition, "o": offset} per record, in input order
//	consume  -broker B -topic T -partition P -offset O -n N [-isolation committed]
//	         [-fetch-bytes B]
//	         > {"o","k","v","h","ts"} per record
//	group    -broker B -group G -topics T1,T2 -strategy range|roundrobin
//	         > {"event": "setup"|"msg"|"cleanup"|"closed", ...}; runs until stdin closes, then
//	           commits what it marked and leaves the group
//	admin    -broker B -group G  > one JSON object: topics, groups, the group's description and
//	           committed offsets as sarama decodes them
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/Shopify/sarama"
)

type record struct {
	Partition int32       `json:"p"`
	Offset    int64       `json:"o"`
	Key       *string     `json:"k"`
	Value     *string     `json:"v"`
	Headers   [][]*string `json:"h"`
	Timestamp int64       `json:"ts"`
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "sarama_peer: "+format+"\n", args...)
	os.Exit(1)
}

func b64(b []byte) *string {
	if b == nil {
		return nil
	}
	s := base64.StdEncoding.EncodeToString(b)
	return &s
}

func unb64(s *string) []byte {
	if s == nil {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(*s)
	if err != nil {
		fail("bad base64 %q: %v", *s, err)
	}
	return b
}

func config(clientID string) *sarama.Config {
	c := sarama.NewConfig()
	// The newest protocol this sarama knows: RecordBatch v2 (Produce v3, Fetch v4) and zstd.
	c.Version = sarama.V2_1_0_0
	c.ClientID = clientID
	c.Metadata.Retry.Backoff = 100 * time.Millisecond
	return c
}

var codecs = map[string]sarama.CompressionCodec{
	"none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP,
	"snappy": sarama.CompressionSnappy, "lz4": sarama.CompressionLZ4,
	"zstd": sarama.CompressionZSTD,
}

func produce(args []string) {
	fs := flag.NewFlagSet("produce", flag.ExitOnError)
	broker := fs.String("broker", "", "bootstrap host:port")
	topic := fs.String("topic", "", "topic")
	codec := fs.String("codec", "none", "none|gzip|snappy|lz4|zstd")
	idempotent := fs.Bool("idempotent", false, "idempotent producer")
	acks := fs.String("acks", "all", "all|1")
	batch := fs.Int("batch", 500, "records that make sarama flush a batch")
	fs.Parse(args)
	c := config("sarama-peer-producer")
	cc, ok := codecs[*codec]
	if !ok {
		fail("unknown codec %q", *codec)
	}
	c.Producer.Compression = cc
	c.Producer.Partitioner = sarama.NewManualPartitioner
	c.Producer.Return.Successes = true
	// Many records per batch, so the server sees real compressed batches.
	c.Producer.Flush.Messages = *batch
	c.Producer.Flush.Frequency = 20 * time.Millisecond
	if *acks == "1" {
		c.Producer.RequiredAcks = sarama.WaitForLocal
	} else {
		c.Producer.RequiredAcks = sarama.WaitForAll
	}
	if *idempotent {
		c.Producer.Idempotent = true
		c.Net.MaxOpenRequests = 1
		c.Producer.Retry.Max = 3
	}
	var msgs []*sarama.ProducerMessage
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	for in.Scan() {
		var r record
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			fail("bad input line %d: %v", len(msgs)+1, err)
		}
		m := &sarama.ProducerMessage{Topic: *topic, Partition: r.Partition,
			Metadata: len(msgs)}
		if r.Key != nil {
			m.Key = sarama.ByteEncoder(unb64(r.Key))
		}
		m.Value = sarama.ByteEncoder(unb64(r.Value))
		for _, h := range r.Headers {
			m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(*h[0]), Value: unb64(h[1])})
		}
		if r.Timestamp != 0 {
			m.Timestamp = time.UnixMilli(r.Timestamp)
		}
		msgs = append(msgs, m)
	}
	p, err := sarama.NewAsyncProducer([]string{*broker}, c)
	if err != nil {
		fail("producer: %v", err)
	}
	out := make([]map[string]interface{}, len(msgs))
	var wg sync.WaitGroup
	wg.Add(1)
	var firstErr error
	go func() {
		defer wg.Done()
		for done := 0; done < len(msgs); done++ {
			select {
			case m := <-p.Successes():
				out[m.Metadata.(int)] = map[string]interface{}{
					"i": m.Metadata.(int), "p": m.Partition, "o": m.Offset}
			case e := <-p.Errors():
				if firstErr == nil {
					firstErr = e.Err
				}
			}
		}
	}()
	for _, m := range msgs {
		p.Input() <- m
	}
	wg.Wait()
	if err := p.Close(); err != nil {
		fail("close: %v", err)
	}
	if firstErr != nil {
		fail("produce: %v", firstErr)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, o := range out {
		enc.Encode(o)
	}
}

func toRecord(m *sarama.ConsumerMessage) record {
	r := record{Partition: m.Partition, Offset: m.Offset, Key: b64(m.Key), Value: b64(m.Value),
		Timestamp: m.Timestamp.UnixMilli()}
	if r.Value == nil {
		empty := ""
		r.Value = &empty
	}
	r.Headers = [][]*string{}
	for _, h := range m.Headers {
		k := string(h.Key)
		r.Headers = append(r.Headers, []*string{&k, b64(h.Value)})
	}
	return r
}

func consume(args []string) {
	fs := flag.NewFlagSet("consume", flag.ExitOnError)
	broker := fs.String("broker", "", "bootstrap host:port")
	topic := fs.String("topic", "", "topic")
	partition := fs.Int("partition", 0, "partition")
	offset := fs.Int64("offset", sarama.OffsetOldest, "first offset (-2: oldest)")
	n := fs.Int("n", 0, "records to read")
	isolation := fs.String("isolation", "uncommitted", "uncommitted|committed")
	fetchBytes := fs.Int("fetch-bytes", 0, "bytes per partition fetch (0: sarama's 1 MiB)")
	fs.Parse(args)
	c := config("sarama-peer-consumer")
	c.Consumer.Return.Errors = true
	if *fetchBytes > 0 {
		c.Consumer.Fetch.Default = int32(*fetchBytes)
	}
	if *isolation == "committed" {
		// Fetch's aborted-transactions list: sarama drops the records of aborted transactions
		// and stops at the last stable offset
		c.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	consumer, err := sarama.NewConsumer([]string{*broker}, c)
	if err != nil {
		fail("consumer: %v", err)
	}
	pc, err := consumer.ConsumePartition(*topic, int32(*partition), *offset)
	if err != nil {
		fail("consume partition: %v", err)
	}
	enc := json.NewEncoder(os.Stdout)
	timeout := time.After(60 * time.Second)
	// An error (a batch sarama cannot decode) may come while records before it are still
	// buffered: it fails the run only if the records asked for do not all arrive.
	var firstErr error
	for i := 0; i < *n; {
		var grace <-chan time.Time
		if firstErr != nil {
			grace = time.After(2 * time.Second)
		}
		select {
		case m := <-pc.Messages():
			enc.Encode(toRecord(m))
			i++
		case e := <-pc.Errors():
			if firstErr == nil {
				firstErr = e.Err
			}
		case <-grace:
			fail("consume: %v (after %d of %d records)", firstErr, i, *n)
		case <-timeout:
			fail("timed out after %d of %d records", i, *n)
		}
	}
	pc.Close()
	consumer.Close()
}

type handler struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (h *handler) emit(v map[string]interface{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.enc.Encode(v)
}

func (h *handler) Setup(s sarama.ConsumerGroupSession) error {
	claims := s.Claims()
	for _, ps := range claims {
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	}
	h.emit(map[string]interface{}{"event": "setup", "member": s.MemberID(),
		"generation": s.GenerationID(), "claims": claims})
	return nil
}

func (h *handler) Cleanup(s sarama.ConsumerGroupSession) error {
	h.emit(map[string]interface{}{"event": "cleanup", "generation": s.GenerationID()})
	return nil
}

func (h *handler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		r := toRecord(m)
		h.emit(map[string]interface{}{"event": "msg", "topic": m.Topic, "p": r.Partition,
			"o": r.Offset, "k": r.Key, "v": r.Value, "generation": s.GenerationID()})
		s.MarkMessage(m, "")
	}
	return nil
}

var strategies = map[string]sarama.BalanceStrategy{
	"range": sarama.BalanceStrategyRange, "roundrobin": sarama.BalanceStrategyRoundRobin,
}

func group(args []string) {
	fs := flag.NewFlagSet("group", flag.ExitOnError)
	broker := fs.String("broker", "", "bootstrap host:port")
	groupID := fs.String("group", "", "group id")
	topics := fs.String("topics", "", "comma-separated topics")
	strategy := fs.String("strategy", "range", "range|roundrobin")
	fs.Parse(args)
	c := config("sarama-peer-group")
	st, ok := strategies[*strategy]
	if !ok {
		fail("unknown strategy %q", *strategy)
	}
	c.Consumer.Group.Rebalance.Strategy = st
	c.Consumer.Offsets.Initial = sarama.OffsetOldest
	c.Consumer.Offsets.CommitInterval = 200 * time.Millisecond
	// A retention makes sarama 1.22 commit with OffsetCommit v2 (v1 without one), the oldest
	// version Kafka 4 serves (KIP-896); the broker keeps it as the offsets' expire timestamp.
	c.Consumer.Offsets.Retention = 7 * 24 * time.Hour
	c.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	c.Consumer.Group.Session.Timeout = 10 * time.Second
	c.Consumer.Return.Errors = true
	g, err := sarama.NewConsumerGroup([]string{*broker}, *groupID, c)
	if err != nil {
		fail("consumer group: %v", err)
	}
	h := &handler{enc: json.NewEncoder(os.Stdout)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// stdin closing is the test's signal to leave.
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	go func() {
		for e := range g.Errors() {
			h.emit(map[string]interface{}{"event": "error", "error": e.Error()})
		}
	}()
	for ctx.Err() == nil {
		if err := g.Consume(ctx, strings.Split(*topics, ","), h); err != nil {
			h.emit(map[string]interface{}{"event": "error", "error": err.Error()})
			time.Sleep(200 * time.Millisecond)
		}
	}
	if err := g.Close(); err != nil {
		fail("close: %v", err)
	}
	h.emit(map[string]interface{}{"event": "closed"})
}

func admin(args []string) {
	fs := flag.NewFlagSet("admin", flag.ExitOnError)
	broker := fs.String("broker", "", "bootstrap host:port")
	groupID := fs.String("group", "", "group to describe")
	fs.Parse(args)
	c := config("sarama-peer-admin")
	a, err := sarama.NewClusterAdmin([]string{*broker}, c)
	if err != nil {
		fail("admin: %v", err)
	}
	defer a.Close()
	out := map[string]interface{}{}
	// Not ListTopics: sarama 1.22 sends it with DescribeConfigs v0, which Kafka 4 no longer
	// serves (KIP-896).
	client, err := sarama.NewClient([]string{*broker}, c)
	if err != nil {
		fail("client: %v", err)
	}
	defer client.Close()
	names, err := client.Topics()
	if err != nil {
		fail("topics: %v", err)
	}
	tp := map[string]int{}
	for _, name := range names {
		ps, err := client.Partitions(name)
		if err != nil {
			fail("partitions of %s: %v", name, err)
		}
		tp[name] = len(ps)
	}
	out["topics"] = tp
	groups, err := a.ListConsumerGroups()
	if err != nil {
		fail("list groups: %v", err)
	}
	out["groups"] = groups
	if *groupID != "" {
		descs, err := a.DescribeConsumerGroups([]string{*groupID})
		if err != nil {
			fail("describe group: %v", err)
		}
		var members []map[string]interface{}
		d := descs[0]
		for id, m := range d.Members {
			meta, err := m.GetMemberMetadata()
			if err != nil {
				fail("member %s metadata: %v", id, err)
			}
			asg, err := m.GetMemberAssignment()
			if err != nil {
				fail("member %s assignment: %v", id, err)
			}
			members = append(members, map[string]interface{}{
				"member": id, "client_id": m.ClientId, "client_host": m.ClientHost,
				"subscription": meta.Topics, "assignment": asg.Topics})
		}
		out["group"] = map[string]interface{}{"state": d.State,
			"protocol_type": d.ProtocolType, "protocol": d.Protocol, "members": members,
			"error": d.Err.Error()}
		// OffsetFetch v1 has no "every partition" form: ask for each partition of each topic.
		wanted := map[string][]int32{}
		for _, name := range names {
			if !strings.HasPrefix(name, "__") {
				wanted[name], _ = client.Partitions(name)
			}
		}
		offsets, err := a.ListConsumerGroupOffsets(*groupID, wanted)
		if err != nil {
			fail("group offsets: %v", err)
		}
		committed := map[string]map[int32]int64{}
		for t, ps := range offsets.Blocks {
			committed[t] = map[int32]int64{}
			for p, b := range ps {
				if b.Offset < 0 {
					continue // -1: nothing committed
				}
				committed[t][p] = b.Offset
			}
		}
		out["offsets"] = committed
	}
	json.NewEncoder(os.Stdout).Encode(out)
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: sarama_peer produce|consume|group|admin ...")
	}
	switch os.Args[1] {
	case "produce":
		produce(os.Args[2:])
	case "consume":
		consume(os.Args[2:])
	case "group":
		group(os.Args[2:])
	case "admin":
		admin(os.Args[2:])
	default:
		fail("unknown command %q", os.Args[1])
	}
}
