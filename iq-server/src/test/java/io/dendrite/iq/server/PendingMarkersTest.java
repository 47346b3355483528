package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class PendingMarkersTest {

  /** What a marker of an 8-character key costs. */
  private static final long EIGHT = 8 + PendingMarkers.OVERHEAD_BYTES;

  @Test
  void aMarkerIsChargedItsKeyAndOverheadToThePinnedQuotaOnceAndGivesThemBackWhenCleared() {
    PinnedQuota quota = new PinnedQuota(1_000);
    PendingMarkers markers = new PendingMarkers(quota, true);

    assertThat(markers.add("doc:0001")).isTrue();
    assertThat(markers.add("doc:0001")).as("marking a marked key again").isTrue();
    assertThat(markers.bytes()).isEqualTo(EIGHT);
    assertThat(quota.used()).isEqualTo(EIGHT);
    assertThat(markers.size()).isEqualTo(1);

    assertThat(markers.remove("doc:0001")).isTrue();
    assertThat(markers.remove("doc:0001")).isFalse();
    assertThat(markers.bytes()).isZero();
    assertThat(quota.used()).isZero();
    assertThat(markers.contains("doc:0001")).isFalse();
  }

  /**
   * The table used to drop its least recently used markers past a bound: the next grant on such a key said "not
   * pending" and a reader filled it from a data store that lacked the buffered write. Past the quota a new marker
   * is now refused, and every marker already there stays.
   */
  @Test
  void pastTheQuotaANewMarkerIsRefusedAndNoneIsDropped() {
    PinnedQuota quota = new PinnedQuota(10 * EIGHT);
    PendingMarkers markers = new PendingMarkers(quota, true);
    for (int i = 0; i < 10; i++) {
      assertThat(markers.add(String.format("doc:%04d", i))).isTrue();
    }

    assertThat(markers.add("doc:0010")).isFalse();

    assertThat(markers.contains("doc:0010")).isFalse();
    assertThat(markers.size()).isEqualTo(10);
    assertThat(markers.bytes()).isEqualTo(10 * EIGHT);
    for (int i = 0; i < 10; i++) {
      assertThat(markers.contains(String.format("doc:%04d", i))).isTrue();
    }
    assertThat(markers.add("doc:0003")).as("a marked key needs no more room").isTrue();
    markers.remove("doc:0000");
    assertThat(markers.add("doc:0010")).as("a cleared marker made room").isTrue();
  }

  @Test
  void severalMarkersAreAddedAllOrNone() {
    PinnedQuota quota = new PinnedQuota(3 * EIGHT);
    PendingMarkers markers = new PendingMarkers(quota, true);
    assertThat(markers.add("doc:0001")).isTrue();

    assertThat(markers.addAll(List.of("doc:0001", "doc:0002", "doc:0003", "doc:0004"))).isFalse();
    assertThat(markers.contains("doc:0002")).isFalse();
    assertThat(markers.contains("doc:0003")).isFalse();
    assertThat(markers.bytes()).isEqualTo(EIGHT);

    assertThat(markers.addAll(List.of("doc:0001", "doc:0002", "doc:0003", "doc:0002")))
        .as("the marked key and a repeated one cost nothing more")
        .isTrue();
    assertThat(markers.size()).isEqualTo(3);
    assertThat(quota.used()).isEqualTo(3 * EIGHT);
  }

  @Test
  void markersAndPinnedItemsShareOneBudget() {
    PinnedQuota quota = new PinnedQuota(200);
    ItemStore items = new ItemStore(1 << 20, quota, () -> 0L);
    PendingMarkers markers = new PendingMarkers(quota, true);
    Item pinned = new Item(new byte[120], 0, 0, 0, true); // 4 + 120 + 64 = 188 bytes

    assertThat(items.put("bw:1", pinned)).isEqualTo(ItemStore.StoreResult.STORED);
    assertThat(markers.add("doc:0001")).as("12 bytes left, a marker takes 72").isFalse();

    items.remove("bw:1");
    assertThat(markers.add("doc:0001")).isTrue();
    assertThat(items.put("bw:1", pinned))
        .as("now the marker holds what the item needs")
        .isEqualTo(ItemStore.StoreResult.OUT_OF_PINNED_MEMORY);
    assertThat(items.pinnedBytes()).isZero();
    assertThat(quota.used()).isEqualTo(EIGHT);
  }

  @Test
  void untilReadyEveryKeyMayBePending() {
    PendingMarkers markers = new PendingMarkers(new PinnedQuota(1_000), false);
    markers.add("doc:0001");
    assertThat(markers.isReady()).isFalse();
    assertThat(markers.pendingBit("doc:0001")).isEqualTo(1);
    assertThat(markers.pendingBit("doc:0002")).as("its marker may have been lost").isEqualTo(1);

    markers.markReady();

    assertThat(markers.isReady()).isTrue();
    assertThat(markers.pendingBit("doc:0001")).isEqualTo(1);
    assertThat(markers.pendingBit("doc:0002")).isZero();
  }

  @Test
  void withoutTheGateTheMarkersAreReportedFromTheStart() {
    PendingMarkers markers = new PendingMarkers(new PinnedQuota(1_000), true);
    markers.add("doc:0001");
    assertThat(markers.pendingBit("doc:0001")).isEqualTo(1);
    assertThat(markers.pendingBit("doc:0002")).isZero();
  }

  /** Markers of different keys are added under different stripes: the quota is never overfilled, nor leaked. */
  @Test
  void concurrentMarkersOfDifferentKeysNeverOverfillTheQuota() throws Exception {
    long limit = 20 * EIGHT;
    PinnedQuota quota = new PinnedQuota(limit);
    PendingMarkers markers = new PendingMarkers(quota, true);
    CountDownLatch start = new CountDownLatch(1);
    AtomicLong highest = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      int thread = t;
      Thread marker =
          new Thread(
              () -> {
                awaitQuietly(start);
                for (int round = 0; round < 20_000; round++) {
                  String key = String.format("k%d_%06d", thread, round % 8);
                  markers.add(key);
                  highest.accumulateAndGet(quota.used(), Math::max);
                  if (round % 3 == 0) {
                    markers.remove(key);
                  }
                }
                for (int i = 0; i < 8; i++) {
                  markers.remove(String.format("k%d_%06d", thread, i));
                }
              });
      threads.add(marker);
      marker.start();
    }
    start.countDown();
    for (Thread thread : threads) {
      thread.join();
    }
    assertThat(highest.get()).as("most bytes ever charged").isLessThanOrEqualTo(limit);
    assertThat(markers.size()).isZero();
    assertThat(markers.bytes()).isZero();
    assertThat(quota.used()).isZero();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
