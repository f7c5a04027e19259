// Test support for tests/groups/test_assignors_java.py: runs Kafka's own consumer assignors
// (compiled from the apache/kafka sources of the local mirror, never committed here) on cases
// read from stdin, the way the consumer leader calls them (assign(Cluster, GroupSubscription),
// subscriptions in a HashMap filled in the order given).
//
// Input, one token per whitespace-separated field:
//   CASE <strategy> [prefer]
//   PART <topic> <partition count> [<racks>/<racks>/...]
//   MEMBER <member id> <generation|-> <group.instance.id|-> <topic,topic|-> <t:p,t:p|-> [<rack|->]
//   END
// "prefer" sets the test-only AbstractPartitionAssignor.preferRackAwareLogic. A PART line's
// optional field lists, partition by partition, the racks of its replicas ("a,b"; "~": no replica
// with a rack): each rack becomes a replica Node with that rack. A MEMBER line's optional last
// field is its client.rack (Subscription.rackId).
// Output per case: RESULT, one line "<member id> <t:p,t:p|->" per member, END
// (or "ERROR <exception>").
package org.apache.kafka.clients.consumer;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor.MemberData;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.types.Field;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.protocol.types.Type;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

public class AssignHarness {
    private static final Schema COOPERATIVE_USER_DATA =
        new Schema(new Field("generation", Type.INT32));

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        String line;
        String strategy = null;
        boolean prefer = false;
        int nextNodeId = 0;
        List<PartitionInfo> parts = new ArrayList<>();
        Map<String, Subscription> subs = new HashMap<>();
        List<String> order = new ArrayList<>();
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split("\\s+");
            if (f[0].equals("CASE")) {
                strategy = f[1];
                prefer = f.length > 2 && f[2].equals("prefer");
                parts = new ArrayList<>();
                subs = new HashMap<>();
                order = new ArrayList<>();
            } else if (f[0].equals("PART")) {
                Node[] none = new Node[0];
                String[] racks = f.length > 3 ? f[3].split("/", -1) : null;
                for (int p = 0; p < Integer.parseInt(f[2]); p++) {
                    Node[] replicas = none;
                    if (racks != null && !racks[p].equals("~")) {
                        String[] r = racks[p].split(",");
                        replicas = new Node[r.length];
                        for (int i = 0; i < r.length; i++)
                            replicas[i] = new Node(nextNodeId++, "host", 9092, r[i]);
                    }
                    parts.add(new PartitionInfo(f[1], p, Node.noNode(), replicas, replicas));
                }
            } else if (f[0].equals("MEMBER")) {
                String member = f[1];
                int generation = f[2].equals("-") ? -1 : Integer.parseInt(f[2]);
                List<String> topics = f[4].equals("-") ? new ArrayList<>() : Arrays.asList(f[4].split(","));
                List<TopicPartition> owned = new ArrayList<>();
                if (!f[5].equals("-")) {
                    for (String tp : f[5].split(",")) {
                        int i = tp.lastIndexOf(':');
                        owned.add(new TopicPartition(tp.substring(0, i), Integer.parseInt(tp.substring(i + 1))));
                    }
                }
                ByteBuffer userData = null;
                List<TopicPartition> subscriptionOwned = owned;
                if (strategy.equals("sticky")) {
                    subscriptionOwned = Collections.emptyList();   // eager: owned travel in user data
                    if (!owned.isEmpty() || generation >= 0)
                        userData = StickyAssignor.serializeTopicPartitionAssignment(
                            new MemberData(owned, Optional.of(generation)));
                } else if (strategy.equals("cooperative-sticky")) {
                    // owned partitions reach the leader sorted (ConsumerProtocol.serializeSubscription)
                    subscriptionOwned = new ArrayList<>(owned);
                    subscriptionOwned.sort(Comparator.comparing(TopicPartition::topic)
                        .thenComparing(TopicPartition::partition));
                    Struct s = new Struct(COOPERATIVE_USER_DATA);
                    s.set("generation", generation);
                    userData = ByteBuffer.allocate(COOPERATIVE_USER_DATA.sizeOf(s));
                    COOPERATIVE_USER_DATA.write(userData, s);
                    userData.flip();
                }
                Optional<String> rack = f.length > 6 && !f[6].equals("-") ? Optional.of(f[6]) : Optional.empty();
                Subscription sub = new Subscription(topics, userData, subscriptionOwned, generation, rack);
                if (!f[3].equals("-"))
                    sub.setGroupInstanceId(Optional.of(f[3]));
                subs.put(member, sub);
                order.add(member);
            } else if (f[0].equals("END")) {
                ConsumerPartitionAssignor assignor;
                switch (strategy) {
                    case "range": assignor = new RangeAssignor(); break;
                    case "roundrobin": assignor = new RoundRobinAssignor(); break;
                    case "sticky": assignor = new StickyAssignor(); break;
                    case "cooperative-sticky": assignor = new CooperativeStickyAssignor(); break;
                    default: throw new IllegalArgumentException(strategy);
                }
                if (prefer) {
                    java.lang.reflect.Field field = org.apache.kafka.clients.consumer.internals.AbstractPartitionAssignor.class
                        .getDeclaredField("preferRackAwareLogic");
                    field.setAccessible(true);
                    field.setBoolean(assignor, true);
                }
                try {
                    Cluster cluster = new Cluster("c", Collections.emptyList(), parts,
                        new HashSet<>(), new HashSet<>());
                    Map<String, ConsumerPartitionAssignor.Assignment> result =
                        assignor.assign(cluster, new ConsumerPartitionAssignor.GroupSubscription(subs)).groupAssignment();
                    out.append("RESULT\n");
                    for (String member : order) {
                        StringBuilder b = new StringBuilder();
                        for (TopicPartition tp : result.get(member).partitions()) {
                            if (b.length() > 0) b.append(',');
                            b.append(tp.topic()).append(':').append(tp.partition());
                        }
                        out.append(member).append(' ').append(b.length() == 0 ? "-" : b).append('\n');
                    }
                    out.append("END\n");
                } catch (RuntimeException e) {
                    out.append("ERROR ").append(e).append('\n');
                }
            }
        }
        System.out.print(out);
    }

    private AssignHarness() { }
}
