package io.dendrite.ycsb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class RecordKeyTest {

  @Test
  void readsTheNumberOfOrderedKeysWithAndWithoutZeroPadding() {
    assertThat(RecordKey.number("user0")).isZero();
    assertThat(RecordKey.number("user42")).isEqualTo(42);
    assertThat(RecordKey.number("user0000000042")).isEqualTo(42);
    assertThat(RecordKey.number("user" + Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void buildsTheKeysYcsbGivesRecordNumbers() {
    assertThat(RecordKey.of(42, 12)).isEqualTo("user000000000042");
    assertThat(RecordKey.of(42, 1)).isEqualTo("user42");
    assertThat(RecordKey.number(RecordKey.of(1234567, 4))).isEqualTo(1234567);
  }

  @Test
  void refusesKeysWithoutANumberNamingTheKey() {
    assertThatThrownBy(() -> RecordKey.number("user"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("\"user\"")
        .hasMessageContaining("insertorder=ordered");
    assertThatThrownBy(() -> RecordKey.number("42user"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RecordKey.number(null)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RecordKey.number("user99999999999999999999"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("64 bits");
  }

  @Test
  void aScanOfNRecordsEndsNMinusOneAfterItsStart() {
    assertThat(RecordKey.scanEnd(10, 1)).isEqualTo(10);
    assertThat(RecordKey.scanEnd(10, 5)).isEqualTo(14);
    assertThatThrownBy(() -> RecordKey.scanEnd(10, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 1");
    assertThatThrownBy(() -> RecordKey.scanEnd(Long.MAX_VALUE, 2))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
