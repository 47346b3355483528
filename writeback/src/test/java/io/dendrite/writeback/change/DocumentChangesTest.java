package io.dendrite.writeback.change;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class DocumentChangesTest {
  private static final EntityChanges ONE =
      new EntityChanges(new EntityKey("t", 1L), ChangeSequence.of(Change.set("val", 1)));
  private static final EntityChanges TWO =
      new EntityChanges(new EntityKey("t", 2L), ChangeSequence.of(Change.delete()));

  @Test
  void oneDocumentsChangesAreTheirOwnWrite() {
    assertThat(ONE.each()).containsExactly(ONE);
    assertThat(DocumentChanges.of(List.of(ONE))).isSameAs(ONE);
  }

  @Test
  void severalDocumentsChangesKeepTheirOrderAndCannotChangeAfterwards() {
    List<EntityChanges> list = new ArrayList<>(List.of(TWO, ONE));
    DocumentChanges several = DocumentChanges.of(list);
    list.clear();
    assertThat(several.each()).containsExactly(TWO, ONE);
    assertThat(DocumentChanges.of(List.of(ONE, TWO)).each()).containsExactly(ONE, TWO);
  }

  @Test
  void anEmptyListOrANullChangeIsRefused() {
    assertThatThrownBy(() -> DocumentChanges.of(List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("empty");
    assertThatThrownBy(() -> DocumentChanges.of(Arrays.asList(ONE, null)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must not be null");
    assertThatThrownBy(() -> DocumentChanges.of(Arrays.asList((EntityChanges) null)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must not be null");
  }
}
