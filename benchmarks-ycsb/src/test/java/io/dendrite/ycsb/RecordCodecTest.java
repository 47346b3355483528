package io.dendrite.ycsb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RecordCodecTest {
  private final RecordCodec codec = new RecordCodec();

  @Test
  void aRecordSurvivesItsByteForm() {
    Map<String, String> fields = new LinkedHashMap<>();
    fields.put("field0", "a value with spaces, commas and ünïcödé");
    fields.put("field1", "");
    YcsbRecord record = new YcsbRecord("user7", 7, fields);

    YcsbRecord decoded = codec.decode(codec.encode(record));

    assertThat(decoded).isEqualTo(record);
    assertThat(codec.attributeOf(decoded)).isEqualTo(7L);
    assertThat(codec.identityOf(decoded)).isEqualTo("user7");
  }

  @Test
  void refusesBytesThatAreNoRecord() {
    assertThatThrownBy(() -> codec.decode(new byte[] {0, 0, 0, 9, 'x'}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not an encoded YCSB record");
    byte[] whole = codec.encode(new YcsbRecord("user1", 1, Map.of("field0", "value")));
    for (int cut = 0; cut < whole.length; cut++) {
      byte[] truncated = java.util.Arrays.copyOf(whole, cut);
      assertThatThrownBy(() -> codec.decode(truncated))
          .as("cut at %d", cut)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("not an encoded YCSB record");
    }
    byte[] longer = java.util.Arrays.copyOf(whole, whole.length + 1);
    assertThatThrownBy(() -> codec.decode(longer))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not an encoded YCSB record");
  }
}
