package io.dendrite.writeback.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.iq.client.CacheValue;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Parsing a pending-writes log's replicas: merged by listing id, removals by id only, counts per copy. */
class PendingWritesPartitionLogTest {

  @Test
  void aLineNoEngineWroteIsPassedOverInsteadOfStoppingTheDrainsOfItsPartition() {
    // A stranger's or a damaged line once made every read of the partition throw, so its
    // buffered writes were never drained again.
    PendingWritesPartition.Log log =
        PendingWritesPartition.Log.of(
            List.of(copy("+BW:t:l1 notanumber a\n+BW:t:l2 20 b\n+garbage 30 c\n")));
    assertThat(log.live())
        .extracting(PendingWritesPartition.Listing::bufferedKey)
        .containsExactly("BW:t:l2", "garbage");

    List<PendingWritesPartition.Entry> entries = PendingWritesPartition.entriesOf(log.live());
    assertThat(entries)
        .extracting(entry -> entry.key().id())
        .as("the listing whose key names no buffered write is passed over")
        .containsExactly(2L);
  }

  @Test
  void mergesCopiesInTheOrderListingsWereAddedAndDropsRemovedOnes() {
    PendingWritesPartition.Log log =
        PendingWritesPartition.Log.of(
            List.of(
                copy("+BW:t:1 10 a\n+BW:t:2 20 b\n-BW:t:1 a\n"),
                copy("+BW:t:2 20 b\n+BW:t:3 30 c\n+BW:t:1 40 d\n\n")));

    assertThat(log.live())
        .containsExactly(
            new PendingWritesPartition.Listing("BW:t:2", "b", Instant.ofEpochMilli(20)),
            new PendingWritesPartition.Listing("BW:t:3", "c", Instant.ofEpochMilli(30)),
            new PendingWritesPartition.Listing("BW:t:1", "d", Instant.ofEpochMilli(40)));
    assertThat(log.longestCopy())
        .as("lines of the longer copy, empty lines not counted")
        .isEqualTo(3);
  }

  @Test
  void aRemovalOnOneReplicaRemovesTheListingEverywhereAndOnlyThatListing() {
    PendingWritesPartition.Log log =
        PendingWritesPartition.Log.of(
            List.of(
                copy("+BW:t:1 10 a\n+BW:t:1 11 b\n"),
                copy("+BW:t:1 10 a\n+BW:t:1 11 b\n-BW:t:1 b\n-BW:t:9 x\n")));

    assertThat(log.live())
        .containsExactly(
            new PendingWritesPartition.Listing("BW:t:1", "a", Instant.ofEpochMilli(10)));
    assertThat(log.longestCopy()).isEqualTo(4);
  }

  @Test
  void equalCopiesCountOnceAndNonAsciiKeysSurvive() {
    String text = "+BW:tåble:ü 5 e1\n+BW:t:2 6 e2\n";
    PendingWritesPartition.Log log =
        PendingWritesPartition.Log.of(List.of(copy(text), copy(text), copy(text)));

    assertThat(log.live())
        .extracting(PendingWritesPartition.Listing::bufferedKey)
        .containsExactly("BW:tåble:ü", "BW:t:2");
    assertThat(log.longestCopy()).isEqualTo(2);
  }

  @Test
  void listingsWrittenBeforeIdsExistedAndUnknownLinesAreRead() {
    PendingWritesPartition.Log log =
        PendingWritesPartition.Log.of(List.of(copy("+BW:t:1 10\n?junk\n+BW:t:2 20\n-BW:t:2\n")));

    assertThat(log.live())
        .containsExactly(
            new PendingWritesPartition.Listing("BW:t:1", "", Instant.ofEpochMilli(10)));
    assertThat(PendingWritesPartition.Log.of(List.of()))
        .isEqualTo(new PendingWritesPartition.Log(List.of(), 0));
  }

  private static CacheValue copy(String lines) {
    return new CacheValue("PendingWrites:0", lines.getBytes(StandardCharsets.UTF_8), 0, 1, false);
  }
}
