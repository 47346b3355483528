package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResultSetCodecTest {
  private final ResultSetCodec<ScoreRow> codec = new ResultSetCodec<>(ScoreRow.CODEC);

  @Test
  void aResultSetSurvivesItsByteFormInOrder() {
    List<ScoreRow> rows = List.of(new ScoreRow(3, 30), new ScoreRow(1, 10), new ScoreRow(2, -20));

    assertThat(codec.decode(codec.encode(rows)).rows()).containsExactlyElementsOf(rows);
  }

  @Test
  void anEmptyResultSetHasAByteFormToo() {
    byte[] empty = codec.encode(List.of());

    assertThat(empty).isNotEmpty();
    assertThat(codec.decode(empty).rows()).isEmpty();
  }

  @Test
  void changeRecordsAppendedToAValueComeBackInOrderAfterItsRows() {
    byte[] value =
        concat(
            codec.encode(List.of(new ScoreRow(1, 10))),
            ResultSetCodec.changeRecord(new byte[] {7}),
            ResultSetCodec.changeRecord(new byte[0]),
            ResultSetCodec.changeRecord(new byte[] {8, 9}));

    ResultSetCodec.Decoded<ScoreRow> decoded = codec.decode(value);

    assertThat(decoded.rows()).containsExactly(new ScoreRow(1, 10));
    assertThat(decoded.changes()).containsExactly(new byte[] {7}, new byte[0], new byte[] {8, 9});
  }

  @Test
  void refusesATruncatedOrUntaggedChangeRecord() {
    byte[] rows = codec.encode(List.of(new ScoreRow(1, 10)));
    byte[] record = ResultSetCodec.changeRecord(new byte[] {7, 7, 7});

    assertThatThrownBy(() -> codec.decode(concat(rows, Arrays.copyOf(record, record.length - 1))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("change record length 3");
    assertThatThrownBy(() -> codec.decode(concat(rows, ByteBuffer.allocate(4).putInt(5).array())))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("5 where a change record starts");
    assertThatThrownBy(() -> codec.decode(concat(rows, new byte[] {1})))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("where a change record starts");
  }

  private static byte[] concat(byte[]... parts) {
    ByteBuffer out = ByteBuffer.allocate(Arrays.stream(parts).mapToInt(part -> part.length).sum());
    Arrays.stream(parts).forEach(out::put);
    return out.array();
  }

  @Test
  void refusesBytesThatAreNoResultSet() {
    byte[] two = codec.encode(List.of(new ScoreRow(1, 10), new ScoreRow(2, 20)));

    assertThatThrownBy(() -> codec.decode(new byte[] {0, 0}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a cached result set");
    assertThatThrownBy(() -> codec.decode(Arrays.copyOf(two, two.length - 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("row length");
    assertThatThrownBy(() -> codec.decode(Arrays.copyOf(two, 4 + 4 + 12 + 2)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("row length");
    assertThatThrownBy(() -> codec.decode(ByteBuffer.allocate(8).putInt(-1).array()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("row count -1");
    assertThatThrownBy(() -> codec.decode(ByteBuffer.allocate(8).putInt(1_000).array()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("row count 1000");
  }
}
