package io.dendrite.writeback.change;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Properties of compaction, idempotent conversion and encoding over many random documents and sequences. */
class ChangeSequencePropertiesTest {
  private static final int CASES = 5_000;
  private static final int MAX_LENGTH = 12;

  @Test
  void compactedSequenceHasTheSameEffectAndIsNoLonger() {
    for (long seed = 0; seed < CASES; seed++) {
      RandomChanges random = new RandomChanges(seed);
      Optional<Map<String, Object>> document = random.document();
      ChangeSequence sequence = random.sequence(MAX_LENGTH);

      ChangeSequence compacted = sequence.compact();

      assertThat(compacted.applyTo(document))
          .as("seed %d: %s compacted to %s on %s", seed, sequence, compacted, document)
          .isEqualTo(sequence.applyTo(document));
      assertThat(compacted.changes().size())
          .as("seed %d", seed)
          .isLessThanOrEqualTo(sequence.changes().size());
      assertThat(compacted.compact())
          .as("seed %d: compaction is stable", seed)
          .isEqualTo(compacted);
    }
  }

  @Test
  void idempotentConversionAppliedTwiceEqualsTheOriginalAppliedOnce() {
    for (long seed = 0; seed < CASES; seed++) {
      RandomChanges random = new RandomChanges(seed);
      Optional<Map<String, Object>> document = random.document();
      ChangeSequence sequence = random.sequence(MAX_LENGTH);

      ChangeSequence converted = sequence.toIdempotent(document);

      String context =
          String.format("seed %d: %s converted to %s on %s", seed, sequence, converted, document);
      assertThat(converted.isIdempotent()).as(context).isTrue();
      Optional<Map<String, Object>> once = sequence.applyTo(document);
      assertThat(converted.applyTo(document)).as(context).isEqualTo(once);
      assertThat(converted.applyTo(converted.applyTo(document))).as(context).isEqualTo(once);
      for (ChangeSequence step : converted.steps()) {
        assertThat(converted.applyTo(step.applyTo(document)))
            .as(context + " after a partial apply")
            .isEqualTo(once);
      }
      assertThat(converted.toIdempotent(once))
          .as(context + ": converting again changes nothing")
          .isEqualTo(converted);
    }
  }

  @Test
  void writesBufferedAfterAConversionStillApplyOnce() {
    for (long seed = 0; seed < CASES; seed++) {
      RandomChanges random = new RandomChanges(seed);
      Optional<Map<String, Object>> document = random.document();
      ChangeSequence first = random.sequence(MAX_LENGTH);
      ChangeSequence later = random.sequence(4);
      ChangeSequence converted = first.toIdempotent(document);
      // A crash after applying the converted form: the store holds its result, the buffer holds
      // converted+later.
      Optional<Map<String, Object>> crashedState = converted.applyTo(document);

      ChangeSequence buffered = converted.then(later);
      ChangeSequence reconverted = buffered.toIdempotent(crashedState);

      assertThat(reconverted.applyTo(crashedState))
          .as("seed %d: %s then %s on %s", seed, first, later, document)
          .isEqualTo(first.then(later).applyTo(document));
    }
  }

  @Test
  void sequencesReportedIdempotentAreIdempotent() {
    for (long seed = 0; seed < CASES; seed++) {
      RandomChanges random = new RandomChanges(seed);
      Optional<Map<String, Object>> document = random.document();
      ChangeSequence sequence = random.idempotentSequence(4);
      if (sequence.isIdempotent()) {
        assertThat(sequence.applyTo(sequence.applyTo(document)))
            .as("seed %d: %s on %s", seed, sequence, document)
            .isEqualTo(sequence.applyTo(document));
      }
    }
  }

  @Test
  void stepsApplyInOrderAsTheWholeSequence() {
    for (long seed = 0; seed < CASES; seed++) {
      RandomChanges random = new RandomChanges(seed);
      Optional<Map<String, Object>> document = random.document();
      ChangeSequence sequence = random.sequence(MAX_LENGTH);

      Optional<Map<String, Object>> stepped = document;
      for (ChangeSequence step : sequence.steps()) {
        assertThat(step.isEmpty()).isFalse();
        stepped = step.applyTo(stepped);
      }

      assertThat(stepped).as("seed %d: %s", seed, sequence).isEqualTo(sequence.applyTo(document));
      assertThat(sequence.steps().stream().mapToInt(step -> step.changes().size()).sum())
          .isEqualTo(sequence.changes().size());
    }
  }

  @Test
  void encodingRoundTrips() {
    for (long seed = 0; seed < CASES; seed++) {
      ChangeSequence sequence = new RandomChanges(seed).sequence(MAX_LENGTH);

      assertThat(ChangeSequence.decode(sequence.encode())).as("seed %d", seed).isEqualTo(sequence);
    }
  }
}
