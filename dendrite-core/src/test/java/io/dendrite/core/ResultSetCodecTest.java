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

    assertThat(codec.decode(codec.encode(rows))).containsExactlyElementsOf(rows);
  }

  @Test
  void anEmptyResultSetHasAByteFormToo() {
    byte[] empty = codec.encode(List.of());

    assertThat(empty).isNotEmpty();
    assertThat(codec.decode(empty)).isEmpty();
  }

  @Test
  void refusesBytesThatAreNoResultSet() {
    byte[] two = codec.encode(List.of(new ScoreRow(1, 10), new ScoreRow(2, 20)));

    assertThatThrownBy(() -> codec.decode(new byte[] {0, 0})).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a cached result set");
    assertThatThrownBy(() -> codec.decode(Arrays.copyOf(two, two.length - 1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("row length");
    assertThatThrownBy(() -> codec.decode(Arrays.copyOf(two, 4 + 4 + 12 + 2)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("row length");
    assertThatThrownBy(() -> codec.decode(ByteBuffer.allocate(8).putInt(-1).array()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("row count -1");
    assertThatThrownBy(() -> codec.decode(ByteBuffer.allocate(8).putInt(1_000).array()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("row count 1000");
  }
}
