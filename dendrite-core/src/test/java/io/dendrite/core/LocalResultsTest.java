package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The near cache's bookkeeping of writes: what a write puts back when it ends, and when it must not. */
class LocalResultsTest {
  private static final String KEY = "dd:scores:id.0:9";

  private static LocalResults.Copy<String> copy(String... rows) {
    return new LocalResults.Copy<>(List.of(rows), 10);
  }

  private static LocalResults<String> holding(String... rows) {
    LocalResults<String> local = new LocalResults<>(1 << 20);
    local.install(KEY, local.stamp(KEY), List.of(rows), 10);
    return local;
  }

  @Test
  void aWriteKeepsWhatItCommittedAndHandsBackTheCopyItFound() {
    LocalResults<String> local = holding("old");

    LocalResults.WriteMarks<String> marks = local.beginWrite(List.of(KEY));
    assertThat(local.get(KEY)).as("dropped while the write runs").isNull();
    assertThat(marks.before(KEY).rows()).containsExactly("old");
    local.endWrite(marks, Map.of(KEY, copy("new")));

    assertThat(local.get(KEY)).containsExactly("new");
  }

  @Test
  void aResultTheWriteDidNotCommitIsDropped() {
    LocalResults<String> local = holding("old");

    local.endWrite(local.beginWrite(List.of(KEY)), Map.of());

    assertThat(local.get(KEY)).isNull();
  }

  /**
   * Two writes of one result: the first to end cannot tell whether the second committed after it, and the second
   * cannot tell whether the first's end came after its commit, so neither keeps its value.
   */
  @Test
  void aWriteThatOverlapsAnotherOfTheSameStripeKeepsNothing() {
    LocalResults<String> local = holding("old");

    LocalResults.WriteMarks<String> first = local.beginWrite(List.of(KEY));
    LocalResults.WriteMarks<String> second = local.beginWrite(List.of(KEY));
    local.endWrite(first, Map.of(KEY, copy("first")));
    assertThat(local.get(KEY)).isNull();
    local.endWrite(second, Map.of(KEY, copy("second")));
    assertThat(local.get(KEY)).isNull();

    // A write alone again keeps its value.
    local.endWrite(local.beginWrite(List.of(KEY)), Map.of(KEY, copy("third")));
    assertThat(local.get(KEY)).containsExactly("third");
  }

  @Test
  void aReaderThatReadDuringAWriteCannotPutItsCopyBack() {
    LocalResults<String> local = holding("old");
    LocalResults.WriteMarks<String> marks = local.beginWrite(List.of(KEY));
    long during = local.stamp(KEY);
    local.endWrite(marks, Map.of(KEY, copy("new")));

    local.install(KEY, during, List.of("read during the write"), 10);

    assertThat(local.get(KEY)).containsExactly("new");
  }

  /**
   * Once an entry is dropped (it left PrInT), writes no longer mark its key, so nothing read or written before the
   * drop may be put back after it: such a copy would never be kept current again.
   */
  @Test
  void nothingReadOrWrittenBeforeADropIsPutBackAfterIt() {
    LocalResults<String> local = holding("old");
    long readBefore = local.stamp(KEY);
    LocalResults.WriteMarks<String> marks = local.beginWrite(List.of(KEY));

    local.drop(KEY);
    local.endWrite(marks, Map.of(KEY, copy("written before the drop")));
    assertThat(local.get(KEY)).isNull();
    local.install(KEY, readBefore, List.of("read before the drop"), 10);
    assertThat(local.get(KEY)).isNull();

    local.install(KEY, local.stamp(KEY), List.of("read after"), 10);
    assertThat(local.get(KEY)).containsExactly("read after");
  }

  @Test
  void aWriteOfTwoResultsInOneStripeKeepsBoth() {
    LocalResults<String> local = new LocalResults<>(1 << 20);
    // Two keys of one stripe: the write's own two marks must not count as another write.
    String other = otherKeyOfTheStripeOf(KEY);
    local.endWrite(local.beginWrite(List.of(KEY, other)), Map.of(KEY, copy("a"), other, copy("b")));

    assertThat(local.get(KEY)).containsExactly("a");
    assertThat(local.get(other)).containsExactly("b");
  }

  /**
   * Two writes at once of two results that share a stripe keep both: writes check each other per key, so an
   * unrelated write does not cost a result kept in L1 alone its only copy.
   */
  @Test
  void writesOfTwoResultsOfOneStripeAtOnceKeepBoth() {
    String other = otherKeyOfTheStripeOf(KEY);
    LocalResults<String> local = new LocalResults<>(1 << 20);

    LocalResults.WriteMarks<String> first = local.beginWrite(List.of(KEY));
    LocalResults.WriteMarks<String> second = local.beginWrite(List.of(other));
    local.endWrite(first, Map.of(KEY, copy("a")));
    local.endWrite(second, Map.of(other, copy("b")));

    assertThat(local.get(KEY)).containsExactly("a");
    assertThat(local.get(other)).containsExactly("b");
  }

  @Test
  void theNegativeControlLeavesItsCopiesAlone() {
    LocalResults<String> local = new LocalResults<>(1 << 20, false);
    local.install(KEY, local.stamp(KEY), List.of("old"), 10);

    local.endWrite(local.beginWrite(List.of(KEY)), Map.of());

    assertThat(local.get(KEY)).containsExactly("old");
  }

  private static String otherKeyOfTheStripeOf(String key) {
    for (int i = 0; ; i++) {
      String candidate = "dd:scores:id." + i;
      if (!candidate.equals(key)
          && LocalResults.stripeOf(candidate) == LocalResults.stripeOf(key)) {
        return candidate;
      }
    }
  }
}
