package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Rows and write commands that are records need no hand-written codec; bad bytes and types are refused. */
class RecordCodecsTest {

  enum Tier {
    GOLD,
    SILVER
  }

  record Everything(
      int id,
      long points,
      double ratio,
      boolean active,
      char grade,
      Integer maybe,
      String name,
      byte[] blob,
      BigDecimal balance,
      Instant at,
      LocalDate day,
      UUID key,
      Tier tier) {}

  record Score(int id, long points) {}

  record Unsupported(int id, List<String> tags) {}

  @Test
  void aRecordOfCommonTypesGoesThroughItsByteFormUnchanged() {
    RowCodec<Integer, Everything> rows =
        RowCodec.ofRecord(Everything.class, Everything::id, Everything::key);
    Everything row =
        new Everything(
            7,
            1L << 40,
            0.25,
            true,
            'é',
            null,
            "naïve \u2603",
            new byte[] {1, 2, 3},
            new BigDecimal("12345.6789"),
            Instant.ofEpochSecond(1_700_000_000L, 123),
            LocalDate.of(2026, 11, 28),
            UUID.randomUUID(),
            Tier.SILVER);
    Everything back = rows.decode(rows.encode(row));
    assertThat(back).usingRecursiveComparison().isEqualTo(row);
    assertThat(Arrays.equals(back.blob(), row.blob())).isTrue();
    assertThat(rows.attributeOf(row)).isEqualTo(7);
    assertThat(rows.identityOf(row)).isEqualTo(row.key());

    Everything nulls =
        new Everything(1, 2, 3, false, 'a', null, null, null, null, null, null, null, null);
    assertThat(rows.decode(rows.encode(nulls))).isEqualTo(nulls);
  }

  @Test
  void bytesOfAnotherShapeAreRefusedNotMisread() {
    RowCodec<Integer, Score> rows = RowCodec.ofRecord(Score.class, Score::id, Score::id);
    byte[] encoded = rows.encode(new Score(1, 2));
    assertThatThrownBy(() -> rows.decode(Arrays.copyOf(encoded, encoded.length - 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not the byte form of a " + Score.class.getName());
    assertThatThrownBy(() -> rows.decode(Arrays.copyOf(encoded, encoded.length + 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not the byte form of a " + Score.class.getName());
  }

  @Test
  void aTypeWithoutABuiltInByteFormIsRefusedWhenTheCodecIsMade() {
    assertThatThrownBy(() -> RowCodec.ofRecord(Unsupported.class, Unsupported::id, Unsupported::id))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "component tags is a java.util.List, which has no built-in byte form");
    @SuppressWarnings({"unchecked", "rawtypes"})
    Class<Record> notARecord = (Class) String.class;
    assertThatThrownBy(() -> RowCodec.ofRecord(notARecord, r -> 1, r -> r))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("a record type is required");
  }

  @Test
  void aRecordCommandCarriesItsByteFormAndItsFunctions() throws Exception {
    RowCodec<Integer, Score> rows = RowCodec.ofRecord(Score.class, Score::id, Score::id);
    List<Score> applied = new java.util.ArrayList<>();
    WriteCommand<Integer, Score, Score> set =
        WriteCommand.of(Score.class, applied::add, score -> CacheUpdate.putting(rows, score));
    Score score = new Score(2, 20);
    assertThat(set.decode(set.encode(score))).isEqualTo(score);
    set.apply(score);
    assertThat(applied).containsExactly(score);
    assertThat(
            set.cacheUpdate(score)
                .apply(Interval.of(0, 9), List.of(new Score(1, 10), new Score(2, 1))))
        .containsExactly(new Score(1, 10), score);
    assertThat(
            CacheUpdate.removing(rows, 1)
                .apply(Interval.of(0, 9), List.of(new Score(1, 10), new Score(2, 1))))
        .containsExactly(new Score(2, 1));
  }
}
