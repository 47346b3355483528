package io.dendrite.iq.client;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

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
