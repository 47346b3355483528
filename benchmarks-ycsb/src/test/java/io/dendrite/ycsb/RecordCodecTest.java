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
    assertThatThrownBy(() -> codec.decode(new byte[] {0, 0, 0, 9, 'x'})).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not an encoded YCSB record");
  }
}
