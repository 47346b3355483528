package io.dendrite.ycsb.bench;

import static io.dendrite.ycsb.bench.DatabaseWorkTest.counts;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.ycsb.bench.YcsbOutputParser.Status;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The meter over counters made up here: which reads the work is the difference of, and the blanks. */
class DatabaseWorkMeterTest {

  private final List<String> warnings = new ArrayList<>();
  private final Status start = new Status(0, 0, 0);
  private final Status middle = new Status(10, 1_000, 100);
  private final Status end = new Status(20, 3_000, 200);
  private final Status shutdown = new Status(20, 3_003, 3);

  @Test
  void theWorkIsBetweenTheReadsAtTheWindowsFirstAndLastLine() {
    ScriptedCounters counters =
        new ScriptedCounters(
            counts(100, 50, 10),
            counts(1_100, 550, 60),
            counts(4_100, 2_050, 160),
            counts(9_999, 9_999, 9_999));
    DatabaseWorkMeter meter = meter(counters);
    for (Status s : List.of(start, middle, end, shutdown)) {
      meter.sample(s);
    }

    // The CPU window ends before the shutdown line, as when the client was gone by then.
    DatabaseWork work = meter.work(Optional.of(new CpuMeter.Window(start, end))).orElseThrow();

    assertThat(work.operations()).isEqualTo(3_000);
    assertThat(work.statements()).hasValue(4_000);
    assertThat(work.commits()).hasValue(2_000);
    assertThat(work.fsyncs()).hasValue(150);
    assertThat(counters.closed).isTrue();
    assertThat(warnings).isEmpty();
  }

  @Test
  void aDatabaseWithoutCountersIsBlankWithoutAWarning() {
    DatabaseWorkMeter meter =
        new DatabaseWorkMeter(
            "basicdb on cpr-star-10", Database.withoutReset("basicdb"), warnings::add);
    meter.sample(start);
    meter.sample(end);

    assertThat(meter.work(Optional.of(new CpuMeter.Window(start, end)))).isEmpty();
    assertThat(warnings).isEmpty();
  }

  @Test
  void aFailedReadLeavesTheFiguresBlankSaysWhyAndReadsNoMore() {
    ScriptedCounters counters =
        new ScriptedCounters(
            counts(100, 50, 10),
            new IllegalStateException("serverStatus of ferretdb-v1.24.2 has no opcounters"),
            counts(4_100, 2_050, 160));
    DatabaseWorkMeter meter = meter(counters);
    meter.sample(start);
    meter.sample(middle); // throws: the thread that follows YCSB's output must go on
    meter.sample(end);

    assertThat(meter.work(Optional.of(new CpuMeter.Window(start, end)))).isEmpty();
    assertThat(counters.reads).isEqualTo(2);
    assertThat(counters.closed).isTrue();
    assertThat(warnings)
        .singleElement()
        .asString()
        .contains(
            "database statements/commits/fsyncs n/a",
            "mysql on cpr-star-10",
            "at 10 s",
            "has no opcounters");
  }

  @Test
  void aServerThatCannotBeReachedLeavesTheFiguresBlankAndSaysSo() {
    StatusCounters unreachable =
        () -> {
          throw new SQLException("Communications link failure");
        };
    DatabaseWorkMeter meter = meter(unreachable);
    meter.sample(start);
    meter.sample(end);

    assertThat(meter.work(Optional.of(new CpuMeter.Window(start, end)))).isEmpty();
    assertThat(warnings)
        .singleElement()
        .asString()
        .contains("cannot connect", "Communications link failure");
  }

  @Test
  void withoutACpuWindowTheFiguresAreBlankAndSaySo() {
    ScriptedCounters counters = new ScriptedCounters(counts(100, 50, 10));
    DatabaseWorkMeter meter = meter(counters);
    meter.sample(start);

    assertThat(meter.work(Optional.empty())).isEmpty();
    assertThat(warnings).singleElement().asString().contains("fewer than two status lines");
  }

  @Test
  void aWindowOfLinesItWasNotHandedIsBlankNotGuessed() {
    DatabaseWorkMeter meter =
        meter(new ScriptedCounters(counts(100, 50, 10), counts(4_100, 2_050, 160)));
    meter.sample(start);
    meter.sample(end);

    // Equal to the lines sampled, but not those lines.
    assertThat(
            meter.work(
                Optional.of(new CpuMeter.Window(new Status(0, 0, 0), new Status(20, 3_000, 200)))))
        .isEmpty();
    assertThat(warnings)
        .singleElement()
        .asString()
        .contains("not read at the first and last status line");
  }

  private DatabaseWorkMeter meter(StatusCounters counters) {
    return new DatabaseWorkMeter(
        "mysql on cpr-star-10",
        new Database("mysql", () -> {}, Optional.<Path>empty(), Optional.of(counters)),
        warnings::add);
  }

  /** Answers each read with the next of its script, a count or an exception to throw. */
  private static final class ScriptedCounters implements StatusCounters {
    private final Deque<Object> script;
    int reads;
    boolean closed;

    ScriptedCounters(Object... script) {
      this.script = new ArrayDeque<>(List.of(script));
    }

    @Override
    public Session open() {
      return new Session() {
        @Override
        public StatusCounts read() throws Exception {
          reads++;
          Object next = script.remove();
          if (next instanceof Exception e) {
            throw e;
          }
          return (StatusCounts) next;
        }

        @Override
        public void close() {
          closed = true;
        }
      };
    }
  }
}
