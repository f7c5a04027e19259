// Test support for tests/groups/test_assignors_java.py: runs the KIP-848 server-side assignors
// (UniformAssignor, RangeAssignor of the group-coordinator module, compiled from the local
// apache/kafka mirror) on cases read from stdin. The group spec holds the members in a HashMap
// filled in the order given (as the coordinator's TargetAssignmentBuilder does) and each current
// assignment as an unmodifiable HashMap of topic id -> HashSet of partitions.
//
// Input:
//   CASE <uniform|server-range>
//   TOPIC <name> <topic id> <partition count>
//   MEMBER <member id> <group.instance.id|-> <topic,topic|-> <t:p,t:p|->
//   END
// Output per case: RESULT, one line "<member id> <t:p,t:p|->" (sorted) per member, END.
package org.apache.kafka.coordinator.group.assignor;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.modern.MemberAssignmentImpl;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

public class ServerAssignHarness {
    static final class Member implements MemberSubscription {
        final Optional<String> instance;
        final Set<Uuid> topics;
        final Map<Uuid, Set<Integer>> assignment;

        Member(Optional<String> instance, Set<Uuid> topics, Map<Uuid, Set<Integer>> assignment) {
            this.instance = instance;
            this.topics = topics;
            this.assignment = assignment;
        }

        public Optional<String> rackId() { return Optional.empty(); }
        public Optional<String> instanceId() { return instance; }
        public Set<Uuid> subscribedTopicIds() { return topics; }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder();
        String strategy = null;
        Map<String, Uuid> ids = new HashMap<>();
        Map<Uuid, String> names = new HashMap<>();
        Map<Uuid, Integer> counts = new HashMap<>();
        Map<String, Member> members = new HashMap<>();
        List<String> order = new ArrayList<>();
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split("\\s+");
            if (f[0].equals("CASE")) {
                strategy = f[1];
                ids = new HashMap<>();
                names = new HashMap<>();
                counts = new HashMap<>();
                members = new HashMap<>();
                order = new ArrayList<>();
            } else if (f[0].equals("TOPIC")) {
                Uuid id = Uuid.fromString(f[2]);
                ids.put(f[1], id);
                names.put(id, f[1]);
                counts.put(id, Integer.parseInt(f[3]));
            } else if (f[0].equals("MEMBER")) {
                Set<Uuid> topics = new HashSet<>();
                if (!f[3].equals("-"))
                    for (String t : f[3].split(",")) topics.add(ids.get(t));
                Map<Uuid, List<Integer>> owned = new HashMap<>();
                List<Uuid> firstSeen = new ArrayList<>();
                if (!f[4].equals("-")) {
                    for (String tp : f[4].split(",")) {
                        int i = tp.lastIndexOf(':');
                        Uuid id = ids.get(tp.substring(0, i));
                        if (!owned.containsKey(id)) firstSeen.add(id);
                        owned.computeIfAbsent(id, k -> new ArrayList<>()).add(Integer.parseInt(tp.substring(i + 1)));
                    }
                }
                Map<Uuid, Set<Integer>> assignment = new HashMap<>();
                for (Uuid id : firstSeen) assignment.put(id, new HashSet<>(owned.get(id)));
                members.put(f[1], new Member(f[2].equals("-") ? Optional.empty() : Optional.of(f[2]),
                    topics, Collections.unmodifiableMap(assignment)));
                order.add(f[1]);
            } else if (f[0].equals("END")) {
                final Map<String, Member> ms = members;
                final Map<Uuid, Integer> cs = counts;
                Set<Set<Uuid>> distinct = new HashSet<>();
                for (Member m : ms.values()) distinct.add(m.topics);
                final SubscriptionType type = distinct.size() <= 1 ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
                final Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
                for (Map.Entry<String, Member> e : ms.entrySet())
                    for (Map.Entry<Uuid, Set<Integer>> a : e.getValue().assignment.entrySet())
                        for (Integer p : a.getValue())
                            inverted.computeIfAbsent(a.getKey(), k -> new HashMap<>()).put(p, e.getKey());
                GroupSpec spec = new GroupSpec() {
                    public Collection<String> memberIds() { return ms.keySet(); }
                    public SubscriptionType subscriptionType() { return type; }
                    public boolean isPartitionAssigned(Uuid topicId, int partitionId) {
                        Map<Integer, String> m = inverted.get(topicId);
                        return m != null && m.containsKey(partitionId);
                    }
                    public MemberSubscription memberSubscription(String memberId) { return ms.get(memberId); }
                    public MemberAssignment memberAssignment(String memberId) {
                        Member m = ms.get(memberId);
                        return new MemberAssignmentImpl(m == null ? Collections.emptyMap() : m.assignment);
                    }
                };
                SubscribedTopicDescriber describer = new SubscribedTopicDescriber() {
                    public int numPartitions(Uuid topicId) { return cs.getOrDefault(topicId, -1); }
                    public Set<String> racksForPartition(Uuid topicId, int partition) { return Collections.emptySet(); }
                };
                try {
                    GroupAssignment result = strategy.equals("uniform")
                        ? new UniformAssignor().assign(spec, describer)
                        : new RangeAssignor().assign(spec, describer);
                    out.append("RESULT\n");
                    for (String member : order) {
                        TreeSet<String> parts = new TreeSet<>();
                        MemberAssignment a = result.members().get(member);
                        if (a != null)
                            for (Map.Entry<Uuid, Set<Integer>> e : a.partitions().entrySet())
                                for (Integer p : e.getValue())
                                    parts.add(names.get(e.getKey()) + ":" + String.format("%06d", p));
                        StringBuilder b = new StringBuilder();
                        for (String p : parts) {
                            if (b.length() > 0) b.append(',');
                            int i = p.lastIndexOf(':');
                            b.append(p, 0, i + 1).append(Integer.parseInt(p.substring(i + 1)));
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

    private ServerAssignHarness() { }
}
