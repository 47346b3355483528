package io.dendrite.writeback.change;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.writeback.change.Change.FieldChange;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/**
 * The streaming codec against format 1 as the earlier tree codec wrote it: the same bytes both ways, so buffered
 * writes left by an earlier version still drain, and every malformed input refused.
 */
class ChangeCodecTest {
  private static final int CASES = 5_000;

  @Test
  void encodesTheSameBytesAsTheFormatOneTreeAndDecodesThem() {
    for (long seed = 0; seed < CASES; seed++) {
      ChangeSequence sequence = new RandomChanges(seed).sequence(12);

      byte[] tree = treeEncoding(sequence);

      assertThat(sequence.encode()).as("seed %d: %s", seed, sequence).isEqualTo(tree);
      assertThat(ChangeSequence.decode(tree)).as("seed %d", seed).isEqualTo(sequence);
    }
  }

  @Test
  void everyValueTypeRoundTrips() {
    Map<String, Object> nested = new LinkedHashMap<>();
    nested.put("n", null);
    nested.put("list", Arrays.asList(1, 2L, 3.5, "s", null, List.of(true), Map.of("deep", false)));
    ChangeSequence sequence =
        ChangeSequence.of(
            Change.set("b", true),
            Change.set("i", 1),
            Change.set("l", 2L),
            Change.set("d", 2.5),
            Change.set("s", "text"),
            Change.set("o", new ObjectId("5f1d7a3b2c4e6a8b9c0d1e2f")),
            Change.set("m", new BigDecimal("12345678901234567890.123")),
            Change.set("t", Instant.ofEpochMilli(1234567)),
            Change.set("doc", nested),
            Change.unset("u"),
            Change.inc("c", 3),
            Change.push("a", Map.of("k", "v")));

    assertThat(ChangeSequence.decode(sequence.encode())).isEqualTo(sequence);
    assertThat(sequence.encode()).isEqualTo(treeEncoding(sequence));
    ChangeSequence inserted = ChangeSequence.of(Change.delete(), new Change.Insert(nested));
    assertThat(ChangeSequence.decode(inserted.encode())).isEqualTo(inserted);
    assertThat(inserted.encode()).isEqualTo(treeEncoding(inserted));
  }

  @Test
  void everyTruncationAndTrailingGarbageIsRefused() {
    for (long seed = 0; seed < 200; seed++) {
      byte[] encoded = new RandomChanges(seed).sequence(6).encode();
      for (int length = 0; length < encoded.length; length++) {
        byte[] truncated = Arrays.copyOf(encoded, length);
        assertThatThrownBy(() -> ChangeSequence.decode(truncated))
            .as("seed %d, %d of %d bytes", seed, length, encoded.length)
            .isInstanceOf(IllegalArgumentException.class);
      }
      byte[] longer = Arrays.copyOf(encoded, encoded.length + 1);
      assertThatThrownBy(() -> ChangeSequence.decode(longer))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("follow");
    }
  }

  @Test
  void missingOrMistypedPartsAreRefusedByName() {
    assertRefused(new BsonDocument("changes", new BsonArray()), "format");
    assertRefused(new BsonDocument("format", new BsonInt32(1)), "changes");
    assertRefused(
        new BsonDocument("format", new BsonInt32(2)).append("changes", new BsonArray()),
        "format 2");
    assertRefused(
        new BsonDocument("format", new BsonString("1")).append("changes", new BsonArray()),
        "format");
    assertRefused(formatOne(new BsonDocument("field", new BsonString("a"))), "op");
    assertRefused(
        formatOne(
            new BsonDocument("op", new BsonString("$set")).append("field", new BsonString("a"))),
        "value");
    assertRefused(
        formatOne(new BsonDocument("op", new BsonString("$set")).append("value", new BsonInt32(1))),
        "field");
    assertRefused(formatOne(new BsonDocument("op", new BsonString("insert"))), "fields");
    assertRefused(
        formatOne(
            new BsonDocument("op", new BsonString("$inc"))
                .append("field", new BsonString("a"))
                .append("value", new BsonString("x"))),
        "non-number");
    // Unknown fields are skipped, as the tree decoder did, so that a later writer may add some.
    BsonDocument withExtra =
        formatOne(
            new BsonDocument("op", new BsonString("delete")).append("note", new BsonString("x")));
    withExtra.append("later", new BsonDocument("x", new BsonInt32(1)));
    assertThat(ChangeSequence.decode(bytes(withExtra)))
        .isEqualTo(ChangeSequence.of(Change.delete()));
  }

  private static void assertRefused(BsonDocument document, String message) {
    assertThatThrownBy(() -> ChangeSequence.decode(bytes(document)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }

  private static BsonDocument formatOne(BsonDocument change) {
    return new BsonDocument("format", new BsonInt32(1))
        .append("changes", new BsonArray(List.of(change)));
  }

  /** Format 1 exactly as the codec before the streaming one built it: a BSON document tree. */
  private static byte[] treeEncoding(ChangeSequence sequence) {
    BsonArray changes = new BsonArray();
    for (Change change : sequence.changes()) {
      BsonDocument encoded;
      if (change instanceof FieldChange fieldChange) {
        encoded =
            new BsonDocument("op", new BsonString(fieldChange.operator()))
                .append("field", new BsonString(fieldChange.field()));
        if (!(change instanceof Change.Unset)) {
          encoded.append("value", FieldValues.toBson(fieldChange.operand()));
        }
      } else if (change instanceof Change.Insert insert) {
        encoded =
            new BsonDocument("op", new BsonString("insert"))
                .append("fields", FieldValues.toBson(insert.fields()));
      } else {
        encoded = new BsonDocument("op", new BsonString("delete"));
      }
      changes.add(encoded);
    }
    return bytes(new BsonDocument("format", new BsonInt32(1)).append("changes", changes));
  }

  private static byte[] bytes(BsonDocument document) {
    ByteBuffer buffer =
        new RawBsonDocument(document, new BsonDocumentCodec()).getByteBuffer().asNIO();
    byte[] bytes = new byte[buffer.remaining()];
    buffer.get(bytes);
    return bytes;
  }
}
