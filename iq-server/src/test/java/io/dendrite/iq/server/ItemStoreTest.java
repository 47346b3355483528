package io.dendrite.iq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ItemStoreTest {
  private static final int VALUE_BYTES = 100;
  private static final long QUOTA = 20 * (VALUE_BYTES + 4 + ItemStore.ITEM_OVERHEAD_BYTES);

  /**
   * Writers of different keys hold different stripes, so the pinned quota is checked and charged concurrently: with
   * a check and a separate charge, two writers that each fit alone both stored and the quota overfilled. Each thread
   * stores and removes its own keys right at the quota's edge; the bytes pinned must never exceed it.
   */
  @Test
  void concurrentPinnedStoresOfDifferentKeysNeverOverfillTheQuota() throws Exception {
    ItemStore store = new ItemStore(1 << 20, new PinnedQuota(QUOTA), () -> 0L);
    int threads = 4;
    CountDownLatch start = new CountDownLatch(1);
    AtomicLong highest = new AtomicLong();
    List<Thread> writers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      Thread writer =
          new Thread(
              () -> {
                awaitQuietly(start);
                for (int round = 0; round < 20_000; round++) {
                  String key = "k" + thread + "_" + (round % 8);
                  Item item = new Item(new byte[VALUE_BYTES], 0, 0, 0, true);
                  store.put(key, item);
                  highest.accumulateAndGet(store.pinnedBytes(), Math::max);
                  if (round % 3 == 0) {
                    store.remove(key);
                  }
                }
              });
      writers.add(writer);
      writer.start();
    }
    start.countDown();
    for (Thread writer : writers) {
      writer.join();
    }
    assertThat(highest.get()).as("most bytes ever pinned").isLessThanOrEqualTo(QUOTA);
    assertThat(store.pinnedBytes()).isLessThanOrEqualTo(QUOTA);
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void visitLiveShowsUnpinnedThenPinnedItemsLeavesExpiredOnesOutAndStopsWhenTold() {
    ItemStore store = new ItemStore(1 << 20, new PinnedQuota(QUOTA), () -> 1_000L);
    store.put("pinned", new Item(new byte[1], 0, 0, 0, true));
    store.put("unpinned", new Item(new byte[1], 0, 0, 0, false));
    store.put("expired", new Item(new byte[1], 0, 999, 0, false));
    List<String> seen = new ArrayList<>();
    store.visitLive((key, item) -> seen.add(key));
    assertThat(seen).containsExactly("unpinned", "pinned");

    List<String> first = new ArrayList<>();
    store.visitLive((key, item) -> first.add(key) && false);
    assertThat(first).containsExactly("unpinned");
  }

  /** What a stopping server tells apart: Dendrite's range logs from buffered writes, which are data. */
  @Test
  void pinnedItemsAreCountedByKeyPrefix() {
    ItemStore store = new ItemStore(1 << 20, new PinnedQuota(QUOTA), () -> 0L);
    store.put("dl:scores:id:0", new Item(new byte[1], 0, 0, 0, true));
    store.put("dl:scores:id:1", new Item(new byte[1], 0, 0, 0, true));
    store.put("BW:scores:7", new Item(new byte[1], 0, 0, 0, true));
    store.put("dl:unpinned", new Item(new byte[1], 0, 0, 0, false));
    assertThat(store.pinnedItemsUnder("dl:")).isEqualTo(2);
    assertThat(store.pinnedItemCount()).isEqualTo(3);
  }

  @Test
  void aSmallerMemoryLimitEvictsUnpinnedItemsAtOnceAndNoPinnedOne() {
    int itemBytes = ItemStore.weight("u10", new Item(new byte[VALUE_BYTES], 0, 0, 0, false));
    ItemStore store = new ItemStore(100L * itemBytes, new PinnedQuota(QUOTA), () -> 0L);
    for (int i = 0; i < 10; i++) {
      store.put("p" + i, new Item(new byte[VALUE_BYTES], 0, 0, 0, true));
    }
    for (int i = 10; i < 60; i++) {
      store.put("u" + i, new Item(new byte[VALUE_BYTES], 0, 0, 0, false));
    }
    assertThat(store.evictions()).isZero();

    store.setMemoryLimit(20L * itemBytes);

    assertThat(store.memoryLimit()).isEqualTo(20L * itemBytes);
    assertThat(store.unpinnedBytes()).isLessThanOrEqualTo(20L * itemBytes);
    assertThat(store.evictions()).isEqualTo(30);
    assertThat(store.pinnedItemCount()).isEqualTo(10);
  }
}
