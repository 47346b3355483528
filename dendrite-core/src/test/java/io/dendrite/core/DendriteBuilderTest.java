package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The builder refuses what it cannot build, in the setter that got it or in build(), naming the setting. */
class DendriteBuilderTest {

  /** A deployment the builder must refuse to reach: it fails the test if it is. */
  static final Dendrite.Deployment UNREACHABLE =
      new Dendrite.Deployment() {
        @Override
        public <K extends Comparable<? super K>, R> Dendrite<K, R> deploy(
            Dendrite.Settings<K, R> settings) {
          throw new AssertionError("deployed");
        }
      };

  /** A buffer that is never used: the builder only keeps it. */
  private static final WriteBuffer<Integer, ScoreRow> UNUSED =
      new WriteBuffer<>() {
        @Override
        public void buffer(Interval<Integer> interval, ScoreRow change) {}

        @Override
        public void applyOverlapping(Interval<Integer> interval) {}
      };

  @Test
  void writeBackIsChosenWithItsBufferNotByPolicyAlone() {
    assertThatThrownBy(
            () ->
                Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
                    .writePolicy(WritePolicy.WRITE_BACK))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("writeBack(buffers)");
  }

  @Test
  void aBufferAndAnotherPolicyConflict() {
    assertThatThrownBy(
            () ->
                Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
                    .writeBack(UNUSED, List.of(ScoreTable.BUFFERED_SET))
                    .writePolicy(WritePolicy.WRITE_THROUGH)
                    .build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("writeBack(buffers) and writePolicy(WRITE_THROUGH) conflict");
  }

  /** Buffers of ScoreRow changes that count what they opened and closed, and never buffer anything. */
  private static final class CountingBuffers implements WriteBuffers<ScoreRow> {
    int opened;
    int closed;

    @Override
    public Class<ScoreRow> changeType() {
      return ScoreRow.class;
    }

    @Override
    public <K extends Comparable<? super K>> WriteBuffer<K, ScoreRow> open(
        DomainType<K> type,
        String collection,
        String domain,
        io.dendrite.iq.client.IqClient cache) {
      opened++;
      return new WriteBuffer<>() {
        @Override
        public void buffer(Interval<K> interval, ScoreRow change) {}

        @Override
        public void applyOverlapping(Interval<K> interval) {}

        @Override
        public void close() {
          closed++;
        }
      };
    }

    @Override
    public <K extends Comparable<? super K>> WriteBuffer<K, ScoreRow> open(
        DomainType<K> type, OwnedRange range, io.dendrite.iq.client.IqClient cache) {
      throw new AssertionError("one process opens no owned range");
    }
  }

  /**
   * Write-back hands each write's argument to the buffer as it is: a command of another type is refused when the
   * Dendrite is built, naming it, before any buffer is opened (it used to fail with a ClassCastException at the
   * first write).
   */
  @Test
  void aWriteBackDendritesCommandsMustTakeTheBuffersChanges() {
    CountingBuffers buffers = new CountingBuffers();
    record Deposit(int id, long amount) {}
    Dendrite.Builder<Integer, ScoreRow> builder =
        Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
            .collection("scores")
            .domain("id")
            .cache(io.dendrite.iq.client.IqClient.builder().servers("127.0.0.1:1").build())
            .writeBack(buffers)
            .command("set", ScoreTable.BUFFERED_SET)
            .command("deposit", WriteCommand.of(Deposit.class, deposit -> {}, null));
    assertThatThrownBy(builder::build)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("write command \"deposit\" takes a")
        .hasMessageContaining("Deposit, which write-back cannot buffer")
        .hasMessageContaining("must be a " + ScoreRow.class.getName());
    assertThatThrownBy(() -> builder.copy().deployment(UNREACHABLE).build())
        .as("checked before any deployment runs")
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("write command \"deposit\"");
    org.assertj.core.api.Assertions.assertThat(buffers.opened).as("buffers opened").isZero();
  }

  @Test
  void aWriteBackDendriteNeedsACommand() {
    assertThatThrownBy(
            () ->
                Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
                    .collection("scores")
                    .domain("id")
                    .cache(io.dendrite.iq.client.IqClient.builder().servers("127.0.0.1:1").build())
                    .writeBack(new CountingBuffers())
                    .build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("bind at least one with command(name, kind)");
  }

  @Test
  void aWriteBackDendriteIsBuiltWithTheCommandsItWrites() {
    assertThatThrownBy(
            () -> Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC).writeBack(UNUSED, List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("writes only the commands it is built with: give at least one");
  }

  @Test
  void aNameIsBoundOnceAndIsNotBlank() {
    Dendrite.Builder<Integer, ScoreRow> builder =
        Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
            .query("scores", (lb, ub) -> List.of())
            .command("set", ScoreTable.BUFFERED_SET);
    assertThatThrownBy(() -> builder.query("scores", (lb, ub) -> List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("scores is bound already");
    assertThatThrownBy(() -> builder.command("set", ScoreTable.BUFFERED_SET))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("set is bound already");
    assertThatThrownBy(() -> builder.query(" ", (lb, ub) -> List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("a name must be 1 to 200 characters, not blank");
  }

  @Test
  void settingsOutOfRangeAreRefusedWithTheirValue() {
    assertThatThrownBy(
            () -> Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC).maxSharedFraction(1.5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxSharedFraction (beta) must be in [0, 1], got 1.5");
    assertThatThrownBy(() -> Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC).logBatch(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("logBatch (alpha) must be at least 1, got 0");
    assertThatThrownBy(
            () ->
                Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
                    .intervalLeases(Duration.ZERO, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("intervalLeases lifetime must be positive, got PT0S");
    assertThatThrownBy(() -> Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC).range(5, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("min 5 is greater than max 1");
    assertThatThrownBy(
            () -> Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC).nearCacheMaxBytes(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("nearCacheMaxBytes must be 0 (off) or more, got -1");
  }

  /** A claim that lapses sooner than its renewals can keep it would let a second owner in while the first runs. */
  @Test
  void anOwnershipClaimShorterThanTwoSecondsIsRefused() {
    assertThatThrownBy(() -> new LocalCoordinator(Duration.ofMillis(1500)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 2 s");
  }
}
