package io.dendrite.writeback.change;

import static io.dendrite.writeback.change.Change.addToSet;
import static io.dendrite.writeback.change.Change.delete;
import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.insert;
import static io.dendrite.writeback.change.Change.pull;
import static io.dendrite.writeback.change.Change.push;
import static io.dendrite.writeback.change.Change.set;
import static io.dendrite.writeback.change.Change.unset;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ChangeSequenceTest {

  @Test
  void compactionExamples() {
    assertThat(ChangeSequence.of(set("a", 1), set("a", 2)).compact())
        .isEqualTo(ChangeSequence.of(set("a", 2)));
    assertThat(ChangeSequence.of(inc("a", 2), inc("a", 3)).compact())
        .isEqualTo(ChangeSequence.of(inc("a", 5)));
    assertThat(ChangeSequence.of(set("a", 1), inc("a", 3)).compact())
        .isEqualTo(ChangeSequence.of(set("a", 4)));
    assertThat(ChangeSequence.of(inc("a", 0.5), inc("a", 0.25)).compact().changes()).hasSize(2);
    assertThat(ChangeSequence.of(insert(Map.of("a", 1)), delete()).compact())
        .isEqualTo(ChangeSequence.of(delete()));
    assertThat(ChangeSequence.of(delete(), insert(Map.of("a", 1))).compact())
        .isEqualTo(ChangeSequence.of(insert(Map.of("a", 1))));
    assertThat(ChangeSequence.of(insert(Map.of("a", 1)), inc("a", 1), push("v", "x")).compact())
        .isEqualTo(ChangeSequence.of(insert(Map.of("a", 2, "v", List.of("x")))));
    assertThat(ChangeSequence.of(delete(), set("a", 1)).compact())
        .isEqualTo(ChangeSequence.of(delete()));
    assertThat(ChangeSequence.of(addToSet("v", "x"), pull("v", "x")).compact().changes())
        .as("kept: on a missing field the pair leaves [], a lone $pull leaves it missing")
        .hasSize(2);
    assertThat(ChangeSequence.of(addToSet("v", "y"), addToSet("v", "x"), pull("v", "x")).compact())
        .isEqualTo(ChangeSequence.of(addToSet("v", "y"), pull("v", "x")));
    assertThat(ChangeSequence.of(set("b", 1), inc("a", 1), set("b", 2), inc("a", 1)).compact())
        .isEqualTo(ChangeSequence.of(set("b", 2), inc("a", 2)));
  }

  @Test
  void thesisExampleOfFriendInvitationKeepsOnlyExactlyEquivalentChanges() {
    ChangeSequence buffered =
        ChangeSequence.of(addToSet("pendingFriends", "Bob"))
            .then(ChangeSequence.of(pull("pendingFriends", "Bob"), addToSet("friends", "Bob")));
    Map<String, Object> alice = Map.of("pendingFriends", List.of("Bob"), "friends", List.of());

    assertThat(buffered.compact().applyTo(Optional.of(alice)))
        .contains(Map.of("pendingFriends", List.of(), "friends", List.of("Bob")));
  }

  @Test
  void idempotenceOfChangesAndSequences() {
    assertThat(
            List.of(
                set("a", 1),
                unset("a"),
                addToSet("a", 1),
                pull("a", 1),
                insert(Map.of()),
                delete()))
        .allMatch(Change::isIdempotent);
    assertThat(List.of(inc("a", 1), push("a", 1))).noneMatch(Change::isIdempotent);
    assertThat(ChangeSequence.of(set("a", 1), addToSet("b", 1)).isIdempotent()).isTrue();
    assertThat(ChangeSequence.of(set("a", 1), inc("b", 1)).isIdempotent()).isFalse();
    assertThat(ChangeSequence.of(pull("a", 1), addToSet("a", 1)).isIdempotent()).isFalse();
  }

  @Test
  void conversionTurnsIncrementsAndPushesIntoSetsOfTheResult() {
    ChangeSequence buffered =
        ChangeSequence.of(inc("visits", 2), push("tags", "x"), inc("visits", 3), set("name", "n"));

    ChangeSequence converted =
        buffered.toIdempotent(Optional.of(Map.of("visits", 10, "tags", List.of("a"))));

    assertThat(converted)
        .isEqualTo(
            ChangeSequence.of(set("visits", 15), set("tags", List.of("a", "x")), set("name", "n")));
    assertThat(buffered.toIdempotent(Optional.empty())).isEqualTo(ChangeSequence.empty());
  }

  @Test
  void incrementsCombineNumericTypesAsMongoDbDoes() {
    assertThat(apply(Map.of("a", Integer.MAX_VALUE), inc("a", 1)))
        .isEqualTo(Integer.MAX_VALUE + 1L);
    assertThat(apply(Map.of("a", 1), inc("a", 2L))).isEqualTo(3L);
    assertThat(apply(Map.of("a", 1), inc("a", 0.5))).isEqualTo(1.5);
    assertThat(apply(Map.of("a", 1), inc("a", new BigDecimal("0.5"))))
        .isEqualTo(new BigDecimal("1.5"));
    assertThat(apply(Map.of(), inc("a", 7))).isEqualTo(7);
    assertThatThrownBy(() -> apply(Map.of("a", Long.MAX_VALUE), inc("a", 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("overflow");
  }

  @Test
  void badInputIsRefusedWithIllegalArgumentException() {
    assertThatThrownBy(() -> inc("a", 1.5f))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("$inc amount");
    assertThatThrownBy(() -> inc("a", null)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> set("a.b", 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> set("$a", 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> set(null, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> set("a", new Object()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unsupported field value type");
    assertThatThrownBy(() -> new EntityKey("users", null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new EntityKey(" ", 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> apply(Map.of("a", "text"), inc("a", 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("non-numeric");
    assertThatThrownBy(() -> apply(Map.of("a", 1), push("a", 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("non-array");
    assertThatThrownBy(() -> ChangeSequence.of(set("a", "x"), inc("a", 1)).compact())
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void decodingRefusesUnknownOperatorsAndGarbage() {
    byte[] encoded = ChangeSequence.of(set("a", 1)).encode();
    byte[] renamed =
        new String(encoded, java.nio.charset.StandardCharsets.ISO_8859_1)
            .replace("$set", "$ren")
            .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);

    assertThatThrownBy(() -> ChangeSequence.decode(renamed))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown change operator $ren");
    assertThatThrownBy(() -> ChangeSequence.decode(new byte[] {1, 2, 3}))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void stepsSeparateRepeatedFieldsAndWholeDocumentChanges() {
    ChangeSequence sequence =
        ChangeSequence.of(set("a", 1), push("b", 1), push("b", 2), delete(), set("a", 2));

    assertThat(sequence.steps())
        .containsExactly(
            ChangeSequence.of(set("a", 1), push("b", 1)),
            ChangeSequence.of(push("b", 2)),
            ChangeSequence.of(delete()),
            ChangeSequence.of(set("a", 2)));
  }

  private static Object apply(Map<String, Object> document, Change change) {
    return ChangeSequence.of(change).applyTo(Optional.of(document)).orElseThrow().get("a");
  }
}
