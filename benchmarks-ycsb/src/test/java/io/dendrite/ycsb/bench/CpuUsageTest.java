package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.dendrite.iq.bench.ProcCpu;
import io.dendrite.ycsb.bench.YcsbOutputParser.Status;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class CpuUsageTest {

  private static final CpuSample START =
      new CpuSample(
          new Status(0, 0, 0),
          OptionalLong.of(500),
          OptionalLong.of(1_000),
          OptionalLong.of(90_000),
          Optional.of(new ProcCpu.MachineTicks(10_000, 40_000)));

  /** 20 s later at 100 ticks/s: 4 000 ticks of the 2 cores, 3 000 of them busy. */
  private static final CpuSample END =
      new CpuSample(
          new Status(20, 4_000, 200),
          OptionalLong.of(1_700),
          OptionalLong.of(1_400),
          OptionalLong.of(91_000),
          Optional.of(new ProcCpu.MachineTicks(13_000, 44_000)));

  @Test
  void cpuTimePerOperationOfEachPartAndTheirSumOverTheOperationsInTheWindow() {
    CpuUsage usage = CpuUsage.between(START, END, OptionalLong.of(100));

    assertThat(usage.operations()).isEqualTo(4_000);
    assertThat(usage.clientMillis()).hasValue(12_000);
    assertThat(usage.clientMicrosPerOperation().getAsDouble()).isCloseTo(3_000, within(1e-9));
    assertThat(usage.cacheMicrosPerOperation().getAsDouble()).isCloseTo(1_000, within(1e-9));
    assertThat(usage.databaseMicrosPerOperation().getAsDouble()).isCloseTo(2_500, within(1e-9));
    assertThat(usage.totalMicrosPerOperation().getAsDouble()).isCloseTo(6_500, within(1e-9));
    assertThat(usage.machineBusyPercent().getAsDouble()).isCloseTo(75, within(1e-9));
  }

  @Test
  void aMissingCounterLeavesItsFigureAndTheTotalBlankButNotTheOthers() {
    CpuSample noDatabase =
        new CpuSample(
            END.status(), END.clientTicks(), END.cacheTicks(), OptionalLong.empty(), END.machine());

    CpuUsage usage = CpuUsage.between(START, noDatabase, OptionalLong.of(100));

    assertThat(usage.databaseMicrosPerOperation()).isEmpty();
    assertThat(usage.totalMicrosPerOperation()).isEmpty();
    assertThat(usage.clientMicrosPerOperation()).isPresent();
    assertThat(usage.machineBusyPercent()).isPresent();
  }

  @Test
  void withoutTheTickRateOnlyTheMachinesShareIsGiven() {
    CpuUsage usage = CpuUsage.between(START, END, OptionalLong.empty());

    assertThat(usage.clientMicrosPerOperation()).isEmpty();
    assertThat(usage.totalMicrosPerOperation()).isEmpty();
    assertThat(usage.machineBusyPercent().getAsDouble()).isCloseTo(75, within(1e-9));
  }

  @Test
  void noOperationsInTheWindowGiveNoFigurePerOperation() {
    CpuSample idleEnd =
        new CpuSample(
            new Status(20, 0, 0),
            END.clientTicks(),
            END.cacheTicks(),
            END.databaseTicks(),
            END.machine());

    CpuUsage usage = CpuUsage.between(START, idleEnd, OptionalLong.of(100));

    assertThat(usage.clientMillis()).hasValue(12_000);
    assertThat(usage.clientMicrosPerOperation()).isEmpty();
    assertThat(usage.totalMicrosPerOperation()).isEmpty();
  }
}
