package io.dendrite.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.iq.client.IqClient;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentSkipListMap;
import org.junit.jupiter.api.Test;

/**
 * The wiring of {@link Dendrite.Builder#outageTolerance}: a write-through Dendrite's writes reach the data store only
 * through the range's guard, and its misses run their query only through it, against a real IQ server. The guard
 * here is a toy (an in-memory table that can be "down", and a list of the writes kept meanwhile); TARDIS is the real
 * one, tested in its module.
 */
class OutageToleranceIT {

  /** A table of scores that can be down, and the writes kept while it is. */
  private static final class ToyTolerance implements OutageTolerance<ScoreRow> {
    final NavigableMap<Integer, ScoreRow> table = new ConcurrentSkipListMap<>();
    final List<ScoreRow> kept = new ArrayList<>();
    volatile boolean down;
    int opened;
    int closed;

    @Override
    public Class<ScoreRow> changeType() {
      return ScoreRow.class;
    }

    @Override
    public <K extends Comparable<? super K>> RangeGuard<K, ScoreRow> open(
        DomainType<K> type, OwnedRange range, IqClient cache) {
      return open(type, range.collection(), range.domain(), cache);
    }

    @Override
    public <K extends Comparable<? super K>> RangeGuard<K, ScoreRow> open(
        DomainType<K> type, String collection, String domain, IqClient cache) {
      opened++;
      return new RangeGuard<>() {
        @Override
        public void write(Interval<K> interval, ScoreRow change) {
          if (down) {
            kept.add(change);
          } else {
            table.put(change.id(), change);
          }
        }

        @Override
        public <T> T miss(Interval<K> interval, Callable<T> query) throws Exception {
          if (down) {
            throw new IllegalStateException("the table is down and " + interval + " is not cached");
          }
          kept.forEach(row -> table.put(row.id(), row)); // what the outage kept, first
          kept.clear();
          return query.call();
        }

        @Override
        public void close() {
          closed++;
        }
      };
    }
  }

  @Test
  void writesAndMissesGoThroughTheGuardAcrossAnOutage() throws Exception {
    ToyTolerance tolerance = new ToyTolerance();
    try (EmbeddedIqServers cacheTier = EmbeddedIqServers.start(1)) {
      Dendrite<Integer, ScoreRow> scores =
          Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
              .collection("scores")
              .domain("id")
              .cache(cacheTier.client)
              .writePolicy(WritePolicy.WRITE_THROUGH)
              .outageTolerance(tolerance)
              .query(
                  "range",
                  (lb, ub) -> List.copyOf(tolerance.table.subMap(lb, true, ub, true).values()))
              .command("set", ScoreTable.BUFFERED_SET) // its apply throws: the guard writes instead
              .build();
      assertThat(tolerance.opened).isOne();
      scores.write("set", 3, 3, new ScoreRow(3, 30));
      assertThat(tolerance.table).containsEntry(3, new ScoreRow(3, 30));
      assertThat(scores.get("range", 0, 9)).containsExactly(new ScoreRow(3, 30));

      tolerance.down = true;
      scores.write("set", 4, 4, new ScoreRow(4, 40));
      assertThat(tolerance.kept).containsExactly(new ScoreRow(4, 40));
      assertThat(scores.get("range", 0, 9))
          .as("a hit, refreshed by the kept write as by a written-through one")
          .containsExactly(new ScoreRow(3, 30), new ScoreRow(4, 40));
      assertThatThrownBy(() -> scores.get("range", 20, 29))
          .as("a miss the guard refuses caches nothing")
          .hasMessageContaining("the table is down");

      tolerance.down = false;
      assertThat(scores.get("range", 20, 29)).isEmpty();
      assertThat(tolerance.table).as("the miss applied the kept write first").containsKey(4);
      assertThatThrownBy(
              () ->
                  ((RangeCache<Integer, ScoreRow>) scores)
                      .write(5, 5, new ScoreRow(5, 50), row -> {}, null))
          .as("a write that brings its own apply would pass the guard by")
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("outage-tolerant");
      scores.close();
      assertThat(tolerance.closed).isOne();
    }
  }

  @Test
  void theBuilderRefusesWhatTheGuardCannotServe() {
    ToyTolerance tolerance = new ToyTolerance();
    record Deposit(int id, long amount) {}
    Dendrite.Builder<Integer, ScoreRow> mistyped =
        unbuilt(tolerance).command("deposit", WriteCommand.of(Deposit.class, deposit -> {}, null));
    assertThatThrownBy(mistyped::build)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("write command \"deposit\" takes a")
        .hasMessageContaining("which the outage tolerance cannot keep");
    assertThatThrownBy(
            () ->
                unbuilt(tolerance)
                    .writeBack(
                        new WriteBuffer<Integer, ScoreRow>() {
                          @Override
                          public void buffer(Interval<Integer> interval, ScoreRow change) {}

                          @Override
                          public void applyOverlapping(Interval<Integer> interval) {}
                        },
                        List.of(ScoreTable.BUFFERED_SET))
                    .buildRangeCache())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(
            "write-back keeps writes buffered through a data-store outage already");
    List<OutageTolerance<?>> deployedWith = new ArrayList<>();
    assertThatThrownBy(
            () ->
                unbuilt(tolerance)
                    .deployment(
                        new Dendrite.Deployment() {
                          @Override
                          public <K extends Comparable<? super K>, R> Dendrite<K, R> deploy(
                              Dendrite.Settings<K, R> settings) {
                            deployedWith.add(settings.outageTolerance());
                            throw new IllegalStateException("deployed");
                          }
                        })
                    .build())
        .hasMessage("deployed");
    assertThat(deployedWith)
        .as("a deployment over many processes is given the tolerance, to open per range")
        .containsExactly(tolerance);
    assertThat(tolerance.opened).isZero();
  }

  /** Scores with {@code tolerance}, over a cache client that never connects: for what the builder refuses. */
  private static Dendrite.Builder<Integer, ScoreRow> unbuilt(ToyTolerance tolerance) {
    return Dendrite.builder(DomainType.INTEGER, ScoreRow.CODEC)
        .collection("scores")
        .domain("id")
        .cache(IqClient.builder().servers("127.0.0.1:1").build())
        .outageTolerance(tolerance);
  }
}
