package io.dendrite.writeback.document;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.writeback.change.Change;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.DocumentChanges;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A forwarded write-back write travels as {@link DocumentCommand}'s byte form and comes back the same. */
class DocumentCommandTest {
  private final DocumentCommand<Long, RangeRow> command =
      DocumentCommand.updating(RangeRow::cacheUpdateOf);

  @Test
  void severalDocumentsChangesComeBackAsTheyWere() {
    DocumentChanges changes =
        DocumentChanges.of(
            List.of(
                new EntityChanges(
                    new EntityKey("t", 7L),
                    ChangeSequence.of(Change.insert(Map.of("id", 7L, "val", 70L)))),
                new EntityChanges(
                    new EntityKey("t", "user8"),
                    ChangeSequence.of(Change.inc("val", 1), Change.set("name", "é\u0000x"))),
                new EntityChanges(new EntityKey("t", 9), ChangeSequence.of(Change.delete()))));
    assertThat(command.decode(command.encode(changes))).isEqualTo(changes);
    EntityChanges one = RangeRow.delete(3);
    assertThat(command.decode(command.encode(one))).isEqualTo(one);
  }

  @Test
  void bytesThatAreNotDocumentChangesAreRefused() {
    byte[] good = command.encode(RangeRow.delete(3));
    assertThatThrownBy(() -> command.decode(Arrays.copyOf(good, good.length - 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not document changes");
    assertThatThrownBy(() -> command.decode(Arrays.copyOf(good, good.length + 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("after the last");
    assertThatThrownBy(() -> command.decode(new byte[] {0, 0, 0, 0}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("0 documents");
    assertThatThrownBy(() -> command.decode(new byte[0]))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void itIsNeverAppliedHere() {
    assertThatThrownBy(() -> command.apply(RangeRow.delete(3)))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("buffered by RangeWriteBack");
  }
}
