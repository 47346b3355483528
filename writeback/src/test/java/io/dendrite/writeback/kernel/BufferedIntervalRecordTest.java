package io.dendrite.writeback.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class BufferedIntervalRecordTest {

  @Test
  void linesRoundTripIncludingKeysThatHoldColons() {
    BufferedIntervalRecord indexed =
        BufferedIntervalRecord.indexed(42, "-5", "17", List.of("BW:t:l3", "BW:t:l9"));
    BufferedIntervalRecord removed = BufferedIntervalRecord.removed(43);

    assertThat(indexed.toLine()).isEqualTo("i:42:-5:17:BW:t:l3 BW:t:l9");
    assertThat(removed.toLine()).isEqualTo("r:43");
    assertThat(BufferedIntervalRecord.parse(indexed.toLine())).contains(indexed);
    assertThat(BufferedIntervalRecord.parse(removed.toLine())).contains(removed);
  }

  @Test
  void tornOrForeignLinesAreNotRecords() {
    assertThat(BufferedIntervalRecord.parse("")).isEmpty();
    assertThat(BufferedIntervalRecord.parse("i:42:1:2")).as("torn before the keys").isEmpty();
    assertThat(BufferedIntervalRecord.parse("i:42:1:2:")).as("no key").isEmpty();
    assertThat(BufferedIntervalRecord.parse("r:4x")).isEmpty();
    assertThat(BufferedIntervalRecord.parse("r:0")).as("LSNs start at 1").isEmpty();
    assertThat(BufferedIntervalRecord.parse("insert:1:1:2:k")).isEmpty();
  }

  @Test
  void recordsThatCouldNotBeReadBackAreRefused() {
    assertThatThrownBy(() -> BufferedIntervalRecord.indexed(1, "a:b", "c", List.of("k")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no colon");
    assertThatThrownBy(() -> BufferedIntervalRecord.indexed(1, "a", "c", List.of("two words")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no space");
    assertThatThrownBy(() -> BufferedIntervalRecord.indexed(1, "a", "c", List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("buffered-write keys");
  }

  @Test
  void liveEntriesAreTheIndexedOnesNoRemovalNamesOnceEachInLsnOrder() {
    BufferedIntervalRecord first = BufferedIntervalRecord.indexed(1, "1", "1", List.of("BW:t:l1"));
    BufferedIntervalRecord sameInterval =
        BufferedIntervalRecord.indexed(2, "1", "1", List.of("BW:t:l1"));
    BufferedIntervalRecord applied =
        BufferedIntervalRecord.indexed(3, "0", "9", List.of("BW:t:l4"));
    BufferedIntervalRecord later = BufferedIntervalRecord.indexed(7, "5", "6", List.of("BW:t:l5"));

    // As merged from two replicas: out of order, duplicated, a removal seen before its entry, a
    // removal of nothing.
    List<BufferedIntervalRecord> merged =
        List.of(
            later,
            BufferedIntervalRecord.removed(3),
            sameInterval,
            first,
            applied,
            later,
            first,
            BufferedIntervalRecord.removed(99));

    assertThat(BufferedIntervalRecord.live(merged)).containsExactly(first, sameInterval, later);
    assertThat(BufferedIntervalRecord.live(List.of())).isEmpty();
  }
}
