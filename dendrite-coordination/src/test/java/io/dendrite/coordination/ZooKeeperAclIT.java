package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Who may change a service's membership and ownership nodes in ZooKeeper: with ZooKeeper credentials, only the
 * service's processes; a client without them cannot rewrite, delete or even read them.
 */
@ExtendWith(RealServers.class)
class ZooKeeperAclIT {
  private static final List<String> RANGES = List.of("r0", "r1");
  private static final String USER = "orders";
  private static final String PASSWORD = "test-only-zookeeper-password";

  private ZooKeeperOwnership coordinator;

  @AfterEach
  void leave() {
    if (coordinator != null) {
      coordinator.close();
    }
  }

  /**
   * On a fresh ensemble the coordinator creates the shared parent {@code /dendrite} too, with its own ACL (a start
   * there used to fail: ZooKeeper refused that ACL list with a NullPointerException).
   */
  @Test
  void withCredentialsTheFirstServiceOfAFreshEnsembleStarts() throws Exception {
    try (org.apache.curator.test.TestingServer fresh =
        new org.apache.curator.test.TestingServer(true)) {
      coordinator =
          ZooKeeperOwnership.builder()
              .connectString(fresh.getConnectString())
              .service("fresh")
              .member("a")
              .credentials(USER, PASSWORD)
              .endpoint("127.0.0.1:7000")
              .sessionTimeout(Duration.ofSeconds(3))
              .ranges(RANGES)
              .listener(new GainedRanges())
              .start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (coordinator.owned().size() < 2 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(coordinator.owned()).hasSize(2);
      coordinator.close();
      coordinator = null;
    }
  }

  @Test
  void aClientWithoutTheCredentialsCannotChangeTheOwnershipNodes(ZooKeeperAddress zk)
      throws Exception {
    GainedRanges gained = new GainedRanges();
    coordinator =
        ZooKeeperOwnership.builder()
            .connectString(zk.connectString())
            .service(zk.service())
            .member("a")
            .credentials(USER, PASSWORD)
            .endpoint("127.0.0.1:7000")
            .sessionTimeout(Duration.ofSeconds(3))
            .ranges(RANGES)
            .listener(gained)
            .start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (coordinator.owned().size() < 2 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(coordinator.owned()).hasSize(2);
    String root = "/dendrite/" + zk.service();

    try (CuratorFramework stranger = ForwardingAuthIT.stranger(zk);
        CuratorFramework colleague = colleague(zk)) {
      for (String path :
          List.of(
              root,
              root + "/members",
              root + "/members/a",
              root + "/ranges",
              root + "/ranges/r0",
              root + "/ranges/r0/epoch",
              root + "/ranges/r0/owner")) {
        List<ACL> acls = colleague.getACL().forPath(path);
        assertThat(acls).as("ACL of %s", path).isNotEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
        assertThat(acls)
            .as("ACL of %s gives anyone write, create, delete or admin", path)
            .noneMatch(
                acl ->
                    acl.getId().equals(ZooDefs.Ids.ANYONE_ID_UNSAFE)
                        && (acl.getPerms() & ~ZooDefs.Perms.READ) != 0);
      }
      assertThatThrownBy(
              () ->
                  stranger
                      .setData()
                      .forPath(root + "/ranges/r0/epoch", "99".getBytes(StandardCharsets.UTF_8)))
          .as("rewriting the epoch")
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> stranger.delete().forPath(root + "/ranges/r0/owner"))
          .as("deleting the owner node")
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(() -> stranger.delete().forPath(root + "/members/a"))
          .as("deleting a member")
          .isInstanceOf(KeeperException.NoAuthException.class);
      assertThatThrownBy(
              () ->
                  stranger
                      .create()
                      .forPath(
                          root + "/members/intruder",
                          "10.6.6.6:1".getBytes(StandardCharsets.UTF_8)))
          .as("joining as a member")
          .isInstanceOf(KeeperException.NoAuthException.class);
    }
    assertThat(coordinator.owned()).as("still owns its ranges").hasSize(2);

    for (ZooKeeperOwnership.Builder misconfigured :
        List.of(
            joining(zk, "without-credentials"),
            joining(zk, "other-credentials").credentials(USER, "another password"))) {
      assertThatThrownBy(misconfigured::start)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("ZooKeeper refused")
          .hasMessageContaining("credentials");
    }
    assertThat(coordinator.owned()).as("still owns its ranges").hasSize(2);
  }

  /**
   * A service whose nodes were made without credentials (an earlier version, or before they were set) is closed up by
   * the first process that starts with them.
   */
  @Test
  void nodesMadeWithOpenAclsAreRestrictedByAProcessWithCredentials(ZooKeeperAddress zk)
      throws Exception {
    ZooKeeperOwnership open = joining(zk, "open").start();
    open.close();
    String root = "/dendrite/" + zk.service();
    try (CuratorFramework stranger = ForwardingAuthIT.stranger(zk)) {
      assertThat(stranger.getACL().forPath(root + "/ranges/r0/epoch"))
          .isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
      coordinator = joining(zk, "a").credentials(USER, PASSWORD).start();
      for (String path : List.of(root, root + "/members", root + "/ranges/r0/epoch")) {
        assertThatThrownBy(() -> stranger.setData().forPath(path, new byte[] {'9'}))
            .as(path)
            .isInstanceOf(KeeperException.NoAuthException.class);
      }
    }
  }

  private static ZooKeeperOwnership.Builder joining(ZooKeeperAddress zk, String member) {
    return ZooKeeperOwnership.builder()
        .connectString(zk.connectString())
        .service(zk.service())
        .member(member)
        .endpoint("127.0.0.1:7001")
        .sessionTimeout(Duration.ofSeconds(3))
        .ranges(RANGES)
        .listener(new GainedRanges());
  }

  /** A client with the service's ZooKeeper credentials, which may read every node's ACL. */
  private static CuratorFramework colleague(ZooKeeperAddress zk) throws InterruptedException {
    CuratorFramework client =
        CuratorFrameworkFactory.builder()
            .connectString(zk.connectString())
            .retryPolicy(new RetryOneTime(100))
            .authorization("digest", (USER + ":" + PASSWORD).getBytes(StandardCharsets.UTF_8))
            .build();
    client.start();
    assertThat(client.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
    return client;
  }
}
