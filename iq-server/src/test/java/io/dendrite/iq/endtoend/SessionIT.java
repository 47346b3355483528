package io.dendrite.iq.endtoend;

import static io.dendrite.iq.endtoend.IqServers.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.LeaseHandle;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReadResult;
import io.dendrite.iq.client.Session;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SessionIT {

  private final IqServers cluster = new IqServers(2);
  private final IqClient client = cluster.client;

  @AfterEach
  void stop() {
    cluster.close();
  }

  @Test
  void readMissFillsThenWriterSwapsAndCommitsAcrossServers() {
    String a = cluster.keyOn(0, "s");
    String b = cluster.keyOn(1, "s");
    try (Session reader = client.beginSession()) {
      ReadResult miss = reader.read(a);
      assertThat(miss).isInstanceOf(ReadResult.Leased.class);
      assertThat(((ReadResult.Leased) miss).lease().fill(bytes("a0"))).isEqualTo(Outcome.OK);
      assertThat(((ReadResult.Hit) reader.read(a)).value().text()).isEqualTo("a0");
      assertThat(reader.commit()).isEqualTo(Outcome.OK);
    }
    client.set(b, bytes("b0"));

    try (Session writer = client.beginSession()) {
      assertThat(((ReadResult.Hit) writer.readForUpdate(a)).value().text()).isEqualTo("a0");
      assertThat(writer.readForUpdate(b)).isInstanceOf(ReadResult.Hit.class);
      assertThat(writer.swap(a, bytes("a1"))).isEqualTo(Outcome.OK);
      assertThat(writer.swap(b, bytes("b1"))).isEqualTo(Outcome.OK);
      assertThat(writer.servers()).hasSize(2);
      assertThat(client.get(a).orElseThrow().text()).isEqualTo("a0");
      assertThat(writer.commit()).isEqualTo(Outcome.OK);
    }
    assertThat(client.get(a).orElseThrow().text()).isEqualTo("a1");
    assertThat(client.get(b).orElseThrow().text()).isEqualTo("b1");
  }

  @Test
  void aWriterAbortsAnEarlierReaderWhoseCommitThenReportsAborted() {
    client.set("acct", bytes("100"));
    Session reader = client.beginSession();
    assertThat(reader.read("acct")).isInstanceOf(ReadResult.Hit.class);

    try (Session writer = client.beginSession()) {
      assertThat(writer.readForUpdate("acct")).isInstanceOf(ReadResult.Hit.class);
      assertThat(writer.swap("acct", bytes("90"))).isEqualTo(Outcome.OK);
      assertThat(writer.commit()).isEqualTo(Outcome.OK);
    }
    assertThat(reader.validate()).isEqualTo(Outcome.ABORTED);
    assertThat(reader.commit()).isEqualTo(Outcome.ABORTED);
    assertThat(client.get("acct").orElseThrow().text()).isEqualTo("90");
  }

  @Test
  void abortDiscardsStagedWrites() {
    client.set("x", bytes("orig"));
    try (Session session = client.beginSession()) {
      assertThat(session.write("x", bytes("new"))).isEqualTo(Outcome.OK);
      assertThat(session.abort()).isEqualTo(Outcome.OK);
    }
    assertThat(client.get("x").orElseThrow().text()).isEqualTo("orig");
  }

  @Test
  void aSecondReaderRetriesWhileTheFirstHoldsTheILeaseThenSeesItsFill() throws Exception {
    Session first = client.beginSession();
    LeaseHandle lease = ((ReadResult.Leased) first.read("cold")).lease();
    try (Session second = client.beginSession()) {
      CompletableFuture<ReadResult> waiting =
          CompletableFuture.supplyAsync(() -> second.read("cold"));
      Thread.sleep(100);
      assertThat(waiting).isNotDone();
      assertThat(lease.fill(bytes("warm"))).isEqualTo(Outcome.OK);
      assertThat(waiting.get(5, TimeUnit.SECONDS))
          .isInstanceOfSatisfying(
              ReadResult.Hit.class, hit -> assertThat(hit.value().text()).isEqualTo("warm"));
      assertThat(second.commit()).isEqualTo(Outcome.OK);
    }
    assertThat(first.commit()).isEqualTo(Outcome.OK);
  }
}
