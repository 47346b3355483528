package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.NotAppliedException;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.UnaryOperator;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who may run a {@link PartitionedDendrite}'s registered operations through its forwarding port: a stranger that
 * finds the port (ZooKeeper names it) and speaks the frame format runs nothing; members that share the secret (and
 * TLS trust, and ZooKeeper credentials) forward to each other; a member with another secret is told why.
 */
@ExtendWith(RealServers.class)
class ForwardingAuthIT {

  private static final ForwardingSecurity SECRET =
      ForwardingSecurity.sharedSecret(bytes("the service's test-only secret"));

  @TempDir static Path dir;

  /**
   * The ZooKeeper nodes are left open here (no credentials): the stranger learns the port and the epoch, and the
   * forwarding port alone must refuse it.
   */
  @Test
  void aStrangerOnTheForwardingPortRunsNoWrite(ZooKeeperAddress zk) throws Exception {
    Map<Integer, Scores.Score> table = new ConcurrentSkipListMap<>();
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(1);
        PartitionedDendrite<Integer, Scores.Score> member =
            member(zk, cacheTier.client, table, "owner", p -> p.forwardingSecurity(SECRET))) {
      assertThat(member.awaitSettled(1, Duration.ofSeconds(30))).isTrue();
      String range = member.ranges().get(0);
      // What the stranger needs, ZooKeeper tells whoever asks: the endpoint and the epoch.
      String root = "/dendrite/" + zk.service() + ".scores.id";
      String endpoint;
      long epoch;
      try (CuratorFramework reader = stranger(zk)) {
        endpoint = text(reader.getData().forPath(root + "/members/owner"));
        String owner = text(reader.getData().forPath(root + "/ranges/" + range + "/owner"));
        epoch = Long.parseLong(owner.substring(owner.lastIndexOf(' ') + 1));
      }

      String answer = rawWrite(endpoint, range, epoch, new Scores.SetVal(12, 666));

      assertThat(table).as("the stranger's write was applied (%s)", answer).isEmpty();
      assertThat(answer).as("no reply, the connection closed").isEqualTo("closed");
    }
  }

  /** Two members with the same secret, ZooKeeper credentials and TLS forward each other gets and writes. */
  @Test
  void membersWithTheSecretForwardGetsAndWritesOverTls(ZooKeeperAddress zk) throws Exception {
    TestCertificates certificates = TestCertificates.make(dir, "member");
    ForwardingSecurity security =
        ForwardingSecurity.sharedSecret(bytes("the service's test-only secret"))
            .tls(certificates.server(), certificates.trusting());
    UnaryOperator<ManyProcesses> secured =
        p ->
            p.forwardingSecurity(security)
                .zooKeeperCredentials("scores", "test-only-zookeeper-password");
    Map<Integer, Scores.Score> table = new ConcurrentSkipListMap<>();
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(1);
        PartitionedDendrite<Integer, Scores.Score> a =
            member(zk, cacheTier.client, table, "a", secured);
        PartitionedDendrite<Integer, Scores.Score> b =
            member(zk, cacheTier.anotherClient(), table, "b", secured)) {
      assertThat(a.awaitSettled(2, Duration.ofSeconds(60))).isTrue();
      assertThat(b.awaitSettled(2, Duration.ofSeconds(60))).isTrue();
      int elsewhere = idServedElsewhere(a);

      a.write("set", elsewhere, elsewhere, new Scores.SetVal(elsewhere, 7));
      assertThat(table).containsEntry(elsewhere, new Scores.Score(elsewhere, 7, 0));
      assertThat(a.get("range", elsewhere, elsewhere))
          .containsExactly(new Scores.Score(elsewhere, 7, 0));
      assertThat(a.metrics().forwardedWrites()).isPositive();
      assertThat(a.metrics().forwardedGets()).isPositive();
    }
  }

  /** The negative control: a member with another secret gets nothing run, and the error names the setting. */
  @Test
  void aMemberWithAnotherSecretGetsNothingRunAndIsToldWhy(ZooKeeperAddress zk) throws Exception {
    Map<Integer, Scores.Score> table = new ConcurrentSkipListMap<>();
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(1);
        PartitionedDendrite<Integer, Scores.Score> a =
            member(zk, cacheTier.client, table, "a", p -> p.forwardingSecurity(SECRET));
        PartitionedDendrite<Integer, Scores.Score> b =
            member(
                zk,
                cacheTier.anotherClient(),
                table,
                "b",
                p ->
                    p.forwardingSecurity(
                        ForwardingSecurity.sharedSecret(bytes("another test-only secret"))))) {
      assertThat(a.awaitSettled(2, Duration.ofSeconds(60))).isTrue();
      int elsewhere = idServedElsewhere(a);

      assertThatThrownBy(
              () -> a.write("set", elsewhere, elsewhere, new Scores.SetVal(elsewhere, 7)))
          .isInstanceOf(NotAppliedException.class)
          .hasMessageContaining("NOT_AUTHENTICATED")
          .hasMessageContaining("wrong forwarding secret")
          .hasMessageContaining("forwardingSecurity");
      assertThat(table).as("nothing was written").isEmpty();
    }
  }

  @Test
  void aMemberWithoutForwardingSecurityIsRefusedAtBuild(ZooKeeperAddress zk) throws Exception {
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(1)) {
      assertThatThrownBy(
              () -> member(zk, cacheTier.client, new ConcurrentSkipListMap<>(), "a", p -> p))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("forwardingSecurity(...) is required")
          .hasMessageContaining("ForwardingSecurity.sharedSecret");
      assertThatThrownBy(
              () ->
                  member(
                      zk,
                      cacheTier.client,
                      new ConcurrentSkipListMap<>(),
                      "a",
                      p ->
                          p.forwardingSecurity(ForwardingSecurity.unauthenticatedOnLoopback())
                              .listen("0.0.0.0", 0)))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("loopback addresses only");
    }
  }

  /** Member {@code name} of the service, deployed as {@code deployment} says on top of what they all share. */
  private static PartitionedDendrite<Integer, Scores.Score> member(
      ZooKeeperAddress zk,
      io.dendrite.iq.client.IqClient cache,
      Map<Integer, Scores.Score> table,
      String name,
      UnaryOperator<ManyProcesses> deployment) {
    return (PartitionedDendrite<Integer, Scores.Score>)
        InMemoryScores.dendrite(cache, table, 59)
            .deployment(
                deployment.apply(
                    ManyProcesses.overZooKeeper(zk.connectString(), zk.service())
                        .ranges(2)
                        .member(name)
                        .sessionTimeout(Duration.ofSeconds(3))))
            .build();
  }

  /** An id in a range {@code member} does not serve (ranges of 30 ids). */
  private static int idServedElsewhere(PartitionedDendrite<Integer, Scores.Score> member) {
    for (int i = 0; i < member.ranges().size(); i++) {
      if (!member.servedRanges().contains(member.ranges().get(i))) {
        return i * 30 + 12;
      }
    }
    throw new AssertionError("serves every range: " + member.servedRanges());
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Sends one forwarded write in the frame format by hand, as a stranger would, and returns what came back: {@code
   * reply <status>} or {@code closed}.
   */
  static String rawWrite(String endpoint, String range, long epoch, Scores.SetVal command)
      throws Exception {
    byte[] body =
        ForwardedCalls.call(
            new ForwardedCalls.Call(
                "set",
                Integer.toString(command.id()),
                Integer.toString(command.id()),
                new InMemorySet(Map.of()).encode(command)));
    ByteBuf frame = Unpooled.buffer();
    ForwardingFrames.writeRequest(
        frame, new ForwardingFrames.Request(1, 5_000, "dendrite.write", range, epoch, body));
    byte[] bytes = new byte[frame.readableBytes()];
    frame.readBytes(bytes);
    int colon = endpoint.lastIndexOf(':');
    try (Socket socket =
        new Socket(endpoint.substring(0, colon), Integer.parseInt(endpoint.substring(colon + 1)))) {
      socket.setSoTimeout(10_000);
      DataOutputStream out = new DataOutputStream(socket.getOutputStream());
      out.writeInt(bytes.length);
      out.write(bytes);
      out.flush();
      DataInputStream in = new DataInputStream(socket.getInputStream());
      // Anything the server sends first (a challenge) is skipped: the stranger cannot answer it.
      while (true) {
        int length;
        try {
          length = in.readInt();
        } catch (EOFException | java.net.SocketException closed) {
          return "closed";
        }
        byte[] reply = new byte[length];
        in.readFully(reply);
        if (reply.length > 9 && reply[0] == ForwardingFrames.REPLY) {
          return "reply " + reply[9] + " " + text(java.util.Arrays.copyOfRange(reply, 10, length));
        }
      }
    }
  }

  static CuratorFramework stranger(ZooKeeperAddress zk) throws InterruptedException {
    CuratorFramework client =
        CuratorFrameworkFactory.newClient(zk.connectString(), new RetryOneTime(100));
    client.start();
    assertThat(client.blockUntilConnected(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    return client;
  }

  static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
