package io.dendrite.coordination;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.faults.CuttableProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Several coordinators (each its own ZooKeeper session, as separate processes have) sharing ranges on a real
 * ZooKeeper server. Every gain is checked against every other coordinator's {@link ZooKeeperOwnership#owns}: a
 * range gained while another process could still serve it is a violation.
 */
@ExtendWith(RealServers.class)
class ZooKeeperOwnershipIT {

  private static final List<String> RANGES = IntStream.range(0, 12).mapToObj(i -> "r" + i).toList();
  private static final Duration SESSION = Duration.ofSeconds(2);
  private static final Duration PATIENCE = Duration.ofSeconds(30);

  private final OverlapChecker checker = new OverlapChecker();
  private final List<ZooKeeperOwnership> started = new CopyOnWriteArrayList<>();
  private final List<CuttableProxy> proxies = new ArrayList<>();

  @AfterEach
  void stopAll() {
    started.forEach(ZooKeeperOwnership::close);
    proxies.forEach(CuttableProxy::close);
  }

  private ZooKeeperOwnership join(String connectString, String service, String member) {
    ZooKeeperOwnership coordinator =
        joinWith(connectString, service, member, checker.listenerOf(member));
    checker.coordinators.put(member, coordinator);
    return coordinator;
  }

  @Test
  void threeProcessesShareTheRangesEvenlyWithOneOwnerEach(ZooKeeperAddress zk) {
    ZooKeeperOwnership a = join(zk.connectString(), zk.service(), "a");
    ZooKeeperOwnership b = join(zk.connectString(), zk.service(), "b");
    ZooKeeperOwnership c = join(zk.connectString(), zk.service(), "c");

    await(() -> a.owned().size() == 4 && b.owned().size() == 4 && c.owned().size() == 4);
    assertThat(checker.violations).isEmpty();
    for (String range : RANGES) {
      await(() -> a.ownerOf(range).isPresent());
      RangeOwner owner = a.ownerOf(range).orElseThrow();
      ZooKeeperOwnership holder = checker.coordinators.get(owner.member());
      assertThat(holder.owned()).containsEntry(range, owner.epoch());
      assertThat(owner.endpoint()).isEqualTo(owner.member() + ".example:7000");
    }
  }

  @Test
  void aJoiningProcessGetsItsShareAndALeavingOnesRangesMoveWithoutOverlap(ZooKeeperAddress zk) {
    ZooKeeperOwnership a = join(zk.connectString(), zk.service(), "a");
    ZooKeeperOwnership b = join(zk.connectString(), zk.service(), "b");
    await(() -> a.owned().size() == 6 && b.owned().size() == 6);
    Map<String, Long> epochsBefore = new ConcurrentHashMap<>(a.owned());
    epochsBefore.putAll(b.owned());

    ZooKeeperOwnership c = join(zk.connectString(), zk.service(), "c");
    await(() -> a.owned().size() == 4 && b.owned().size() == 4 && c.owned().size() == 4);
    c.owned().forEach((range, epoch) -> assertThat(epoch).isGreaterThan(epochsBefore.get(range)));

    started.remove(a);
    a.close();
    await(() -> b.owned().size() == 6 && c.owned().size() == 6);
    assertThat(checker.violations).isEmpty();
    assertThat(checker.gains.get()).isGreaterThanOrEqualTo(12 + 4 + 4);
  }

  @Test
  void aProcessCutOffFromZooKeeperStopsServingBeforeTheOthersTakeItsRanges(ZooKeeperAddress zk)
      throws Exception {
    String[] hostPort = zk.connectString().split(":");
    CuttableProxy proxy = new CuttableProxy(hostPort[0], Integer.parseInt(hostPort[1]));
    proxies.add(proxy);
    ZooKeeperOwnership a = join(zk.connectString(), zk.service(), "a");
    ZooKeeperOwnership b = join(zk.connectString(), zk.service(), "b");
    ZooKeeperOwnership c = join("127.0.0.1:" + proxy.port(), zk.service(), "c");
    await(() -> c.owned().size() == 4 && a.owned().size() == 4 && b.owned().size() == 4);
    Map<String, Long> cHeld = c.owned();

    proxy.blackHole(); // packets dropped: c hears nothing and is not told
    await(() -> a.owned().size() == 6 && b.owned().size() == 6);
    cHeld.forEach((range, epoch) -> assertThat(c.owns(range, epoch)).as(range).isFalse());
    assertThat(checker.violations).as("a range gained while c could still serve it").isEmpty();

    proxy.restore();
    await(() -> a.owned().size() == 4 && b.owned().size() == 4 && c.owned().size() == 4);
    assertThat(checker.violations).isEmpty();
    c.owned()
        .forEach((range, epoch) -> assertThat(epoch).isGreaterThan(cHeld.getOrDefault(range, 0L)));
  }

  /**
   * A range counts as handed over only when its previous owner released it after it stopped serving it; a range
   * whose owner's session ended (here: cut off from ZooKeeper), or that never had an owner, does not.
   */
  @Test
  void aRangeIsHandedOverOnlyWhenItsOwnerReleasedIt(ZooKeeperAddress zk) throws Exception {
    String[] hostPort = zk.connectString().split(":");
    CuttableProxy proxy = new CuttableProxy(hostPort[0], Integer.parseInt(hostPort[1]));
    proxies.add(proxy);
    GainedRanges aGains = new GainedRanges();
    GainedRanges cGains = new GainedRanges();
    ZooKeeperOwnership a = joinWith(zk.connectString(), zk.service(), "a", aGains);
    await(() -> a.owned().size() == RANGES.size());
    assertThat(aGains.handedOver)
        .as("never owned before")
        .containsOnlyKeys(RANGES)
        .doesNotContainValue(true);

    ZooKeeperOwnership c = joinWith("127.0.0.1:" + proxy.port(), zk.service(), "c", cGains);
    await(() -> c.owned().size() == RANGES.size() / 2 && a.owned().size() == RANGES.size() / 2);
    assertThat(cGains.handedOver)
        .as("released by a")
        .hasSize(RANGES.size() / 2)
        .doesNotContainValue(false);

    aGains.handedOver.clear();
    proxy.blackHole();
    await(() -> a.owned().size() == RANGES.size());
    assertThat(aGains.handedOver)
        .as("c's session ended")
        .hasSize(RANGES.size() / 2)
        .doesNotContainValue(true);
  }

  private ZooKeeperOwnership joinWith(
      String connectString, String service, String member, OwnershipListener listener) {
    ZooKeeperOwnership coordinator =
        ZooKeeperOwnership.builder()
            .connectString(connectString)
            .service(service)
            .member(member)
            .endpoint(member + ".example:7000")
            .sessionTimeout(SESSION)
            .ranges(RANGES)
            .listener(listener)
            .start();
    started.add(coordinator);
    return coordinator;
  }

  /**
   * ZooKeeper itself stops (an embedded server here, so that stopping it disturbs no other test): every owner stops
   * counting itself owner within a session timeout, and once ZooKeeper is back the ranges are owned again, under
   * new epochs.
   */
  @Test
  void whileZooKeeperIsDownNobodyOwnsAnythingAndOwnershipComesBackAfter() throws Exception {
    try (TestingServer server = new TestingServer(true)) {
      ZooKeeperOwnership a = join(server.getConnectString(), "restarted", "a");
      ZooKeeperOwnership b = join(server.getConnectString(), "restarted", "b");
      await(() -> a.owned().size() == 6 && b.owned().size() == 6);
      Map<String, Long> before = new ConcurrentHashMap<>(a.owned());
      before.putAll(b.owned());

      server.stop();
      long stoppedAt = System.nanoTime();
      await(() -> a.owned().isEmpty() && b.owned().isEmpty());
      // Within 80% of a session after the last answered heartbeat; the second is this thread's own
      // scheduling on a busy machine.
      assertThat(Duration.ofNanos(System.nanoTime() - stoppedAt))
          .isLessThanOrEqualTo(SESSION.plusSeconds(1));

      server.restart();
      await(() -> a.owned().size() == 6 && b.owned().size() == 6);
      assertThat(checker.violations).isEmpty();
      a.owned().forEach((range, epoch) -> assertThat(epoch).isGreaterThan(before.get(range)));
      b.owned().forEach((range, epoch) -> assertThat(epoch).isGreaterThan(before.get(range)));
      stopAll(); // while the server still runs
      started.clear();
    }
  }

  /** A listener that takes longer than a session to rebuild one range lets none of the others lapse meanwhile. */
  @Test
  void aSlowGainDoesNotLetTheOtherOwnershipsLapse(ZooKeeperAddress zk) throws Exception {
    java.util.concurrent.CountDownLatch slow = new java.util.concurrent.CountDownLatch(1);
    ZooKeeperOwnership coordinator =
        ZooKeeperOwnership.builder()
            .connectString(zk.connectString())
            .service(zk.service())
            .member("slow")
            .sessionTimeout(SESSION)
            .ranges(List.of("fast", "slow"))
            .listener(
                new OwnershipListener() {
                  @Override
                  public void gained(String range, long epoch) {
                    if (range.equals("slow")) {
                      slow.countDown();
                      try {
                        Thread.sleep(SESSION.toMillis() * 2); // a long rebuild
                      } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                      }
                    }
                  }

                  @Override
                  public void lost(String range, long epoch) {}
                })
            .start();
    started.add(coordinator);
    assertThat(slow.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    long until = System.nanoTime() + SESSION.toNanos() * 3 / 2;
    while (System.nanoTime() < until) {
      assertThat(coordinator.owned()).as("while the other range rebuilds").containsKey("fast");
      Thread.sleep(50);
    }
  }

  /**
   * A process whose owner node of a range goes, and another's takes its place (as when a node left from before a
   * suspension is removed just as its session ends and another process takes the range), stops serving the range:
   * it must not go on believing it owns it beside the new owner.
   */
  @Test
  void aProcessWhoseOwnerNodeNamesAnotherOwnerStopsServingTheRange(ZooKeeperAddress zk)
      throws Exception {
    List<String> lost = new CopyOnWriteArrayList<>();
    ZooKeeperOwnership a =
        joinWith(
            zk.connectString(),
            zk.service(),
            "a",
            new OwnershipListener() {
              @Override
              public void gained(String range, long epoch) {}

              @Override
              public void lost(String range, long epoch) {
                lost.add(range + "@" + epoch);
              }
            });
    await(() -> a.owned().size() == RANGES.size());
    long epoch = a.owned().get("r0");
    String rangePath = "/dendrite/" + zk.service() + "/ranges/r0";
    try (CuratorFramework other =
        CuratorFrameworkFactory.newClient(zk.connectString(), new RetryOneTime(100))) {
      other.start();
      // What another process's takeover leaves: the epoch bumped and the owner node its own.
      other
          .transaction()
          .forOperations(
              other
                  .transactionOp()
                  .setData()
                  .withVersion((int) epoch)
                  .forPath(rangePath + "/epoch", String.valueOf(epoch + 1).getBytes(UTF_8)),
              other.transactionOp().delete().forPath(rangePath + "/owner"),
              other
                  .transactionOp()
                  .create()
                  .forPath(rangePath + "/owner", ("b " + (epoch + 1)).getBytes(UTF_8)));
      // owns() turns false as soon as the ownership view changes, a moment before the listener
      // is told (every request checks owns()): wait for both.
      await(() -> !a.owns("r0", epoch) && !lost.isEmpty());
      assertThat(lost).containsExactly("r0@" + epoch);
      assertThat(a.owned()).doesNotContainKey("r0").hasSize(RANGES.size() - 1);
    }
  }

  @Test
  void theCheckerFindsARangeGainedWhileAnotherProcessStillOwnsIt(ZooKeeperAddress zk) {
    ZooKeeperOwnership a = join(zk.connectString(), zk.service(), "a");
    await(() -> a.owned().size() == 12);
    // A second process that ignored the coordinator: it starts serving a range a owns.
    checker.listenerOf("rogue").gained("r0", 99);
    assertThat(checker.violations).singleElement().asString().contains("rogue gained r0", "a");
  }

  private static void await(BooleanSupplier condition) {
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("not within " + PATIENCE);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  /** Records every gain that another coordinator's {@code owns} still covered. */
  private static final class OverlapChecker {
    final Map<String, ZooKeeperOwnership> coordinators = new ConcurrentHashMap<>();
    final List<String> violations = new CopyOnWriteArrayList<>();
    final java.util.concurrent.atomic.AtomicInteger gains =
        new java.util.concurrent.atomic.AtomicInteger();

    OwnershipListener listenerOf(String member) {
      return new OwnershipListener() {
        @Override
        public void gained(String range, long epoch) {
          gains.incrementAndGet();
          coordinators.forEach(
              (other, coordinator) -> {
                if (!other.equals(member)) {
                  Long theirs = coordinator.owned().get(range);
                  if (theirs != null && coordinator.owns(range, theirs)) {
                    violations.add(
                        member
                            + " gained "
                            + range
                            + " (epoch "
                            + epoch
                            + ") while "
                            + other
                            + " owns it (epoch "
                            + theirs
                            + ")");
                  }
                }
              });
        }

        @Override
        public void lost(String range, long epoch) {}
      };
    }
  }
}
