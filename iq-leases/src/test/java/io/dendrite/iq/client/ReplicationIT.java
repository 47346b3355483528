package io.dendrite.iq.client;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ReplicationIT {

    private final IqServers cluster = new IqServers(3, client -> client, server -> server.pinnedMemoryBytes(64 * 1024));
    private final IqClient client = cluster.client;

    @AfterEach
    void stop() {
        cluster.close();
    }

    @Test
    void replicatedWritesLandPinnedOnExactlyRDistinctServers() throws Exception {
        byte[] value = "buffered".getBytes(StandardCharsets.UTF_8);
        List<ServerAddress> replicas = client.serversFor("bw:1", 2);

        assertThat(client.setReplicated("bw:1", value, 2)).isEqualTo(Outcome.OK);

        for (ServerAddress server : cluster.addresses()) {
            try (IqClient direct = IqClient.builder().servers(server.toString()).build()) {
                boolean expected = replicas.contains(server);
                assertThat(direct.get("bw:1").isPresent()).as("copy on %s", server).isEqualTo(expected);
                assertThat(IqServers.stats(server).get("pinned_items")).isEqualTo(expected ? "1" : "0");
            }
        }
        assertThat(client.getReplicated("bw:1", 2).orElseThrow().text()).isEqualTo("buffered");
        assertThat(client.deleteReplicated("bw:1", 2)).isEqualTo(Outcome.OK);
        assertThat(client.getReplicated("bw:1", 2)).isEmpty();
    }

    @Test
    void replicatedAppendsLandPinnedOnEveryReplicaAndEachReplicaCanBeRead() throws Exception {
        List<ServerAddress> replicas = client.serversFor("log:1", 2);
        assertThat(client.appendReplicated("log:1", List.of(IqServers.bytes("a\n"), IqServers.bytes("b\n")), 2)).isEqualTo(Outcome.OK);
        assertThat(client.appendReplicated("log:1", List.of(IqServers.bytes("c\n")), 2)).isEqualTo(Outcome.OK);

        for (ServerAddress server : cluster.addresses()) {
            try (IqClient direct = IqClient.builder().servers(server.toString()).build()) {
                boolean expected = replicas.contains(server);
                assertThat(direct.get("log:1").map(CacheValue::text)).as("copy on %s", server)
                    .isEqualTo(expected ? Optional.of("a\nb\nc\n") : Optional.empty());
                assertThat(IqServers.stats(server).get("pinned_items")).isEqualTo(expected ? "1" : "0");
            }
        }
        try (IqClient direct = IqClient.builder().servers(replicas.get(0).toString()).build()) {
            direct.delete("log:1"); // as a restarted server that lost its copy
        }
        assertThat(client.appendReplicated("log:1", List.of(IqServers.bytes("d\n")), 2)).isEqualTo(Outcome.OK);
        assertThat(client.getEachReplica("log:1", 2)).extracting(CacheValue::text).containsExactly("d\n", "a\nb\nc\nd\n");
        assertThatThrownBy(() -> client.appendReplicated("log:1", List.of(), 2))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("nothing to append");
    }

    @Test
    void pinnedWritesReportAFullQuotaAndUnpinFreesIt() {
        byte[] chunk = new byte[16 * 1024];
        try (IqClient direct = IqClient.builder().servers(cluster.addresses().get(0).toString()).build()) {
            Outcome outcome = Outcome.OK;
            int stored = 0;
            while (outcome == Outcome.OK && stored < 100) {
                outcome = direct.setPinned("pin:" + stored, chunk);
                stored += outcome == Outcome.OK ? 1 : 0;
            }
            assertThat(outcome).isEqualTo(Outcome.PINNED_MEMORY_FULL);
            assertThat(stored).isBetween(1, 4);
            assertThat(direct.set("unpinned", chunk)).isEqualTo(Outcome.OK);

            assertThat(direct.unpin("pin:0")).isEqualTo(Outcome.OK);
            assertThat(direct.setPinned("pin:again", chunk)).isEqualTo(Outcome.OK);
        }
    }
}
