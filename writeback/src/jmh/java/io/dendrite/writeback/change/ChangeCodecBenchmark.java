package io.dendrite.writeback.change;

import io.dendrite.writeback.change.Change.FieldChange;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBinaryReader;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.DecoderContext;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * What encoding and decoding one buffered write costs: the streaming {@link ChangeCodec} beside the document-tree
 * codec it replaced (kept here, format 1 exactly, as the baseline), on the change a YCSB update buffers — a row of
 * {@code fields} {@code $set}s of 100-character strings — and on a short mixed sequence.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = "-Xmx1g")
public class ChangeCodecBenchmark {
  @Param({"ycsb-row", "mixed"})
  String sequence;

  private ChangeSequence changes;
  private byte[] encoded;

  @Setup
  public void build() {
    if (sequence.equals("ycsb-row")) {
      List<Change> sets = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        sets.add(Change.set("field" + i, "v".repeat(99) + i));
      }
      changes = new ChangeSequence(sets);
    } else {
      changes =
          ChangeSequence.of(
              Change.inc("count", 1),
              Change.set("name", "somebody"),
              Change.push("tags", "t"),
              Change.unset("gone"),
              Change.addToSet("friends", 12L));
    }
    encoded = changes.encode();
    if (!java.util.Arrays.equals(encoded, treeEncode(changes))) {
      throw new IllegalStateException("the two codecs disagree on " + changes);
    }
  }

  @Benchmark
  public byte[] streamEncode() {
    return changes.encode();
  }

  @Benchmark
  public byte[] treeEncode() {
    return treeEncode(changes);
  }

  @Benchmark
  public ChangeSequence streamDecode() {
    return ChangeSequence.decode(encoded);
  }

  @Benchmark
  public ChangeSequence treeDecode() {
    return treeDecode(encoded);
  }

  private static byte[] treeEncode(ChangeSequence sequence) {
    BsonArray array = new BsonArray();
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
      array.add(encoded);
    }
    BsonDocument document = new BsonDocument("format", new BsonInt32(1)).append("changes", array);
    ByteBuffer buffer =
        new RawBsonDocument(document, new BsonDocumentCodec()).getByteBuffer().asNIO();
    byte[] bytes = new byte[buffer.remaining()];
    buffer.get(bytes);
    return bytes;
  }

  private static ChangeSequence treeDecode(byte[] bytes) {
    BsonDocument document =
        new BsonDocumentCodec()
            .decode(new BsonBinaryReader(ByteBuffer.wrap(bytes)), DecoderContext.builder().build());
    List<Change> changes = new ArrayList<>();
    for (BsonValue value : document.getArray("changes")) {
      BsonDocument change = value.asDocument();
      String op = change.getString("op").getValue();
      Object operand =
          change.containsKey("value") ? FieldValues.fromBson(change.get("value")) : null;
      String field = change.containsKey("field") ? change.getString("field").getValue() : null;
      changes.add(
          switch (op) {
            case "$set" -> Change.set(field, operand);
            case "$inc" -> Change.inc(field, (Number) operand);
            case "$push" -> Change.push(field, operand);
            case "$addToSet" -> Change.addToSet(field, operand);
            case "$pull" -> Change.pull(field, operand);
            case "$unset" -> Change.unset(field);
            case "delete" -> Change.delete();
            default -> throw new IllegalArgumentException(op);
          });
    }
    return new ChangeSequence(changes);
  }
}
