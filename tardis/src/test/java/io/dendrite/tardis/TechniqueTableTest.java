package io.dendrite.tardis;

import static io.dendrite.tardis.Technique.MissAction.APPLY_THEN_QUERY;
import static io.dendrite.tardis.Technique.MissAction.QUERY;
import static io.dendrite.tardis.Technique.MissAction.UNAVAILABLE;
import static io.dendrite.tardis.Technique.WriteAction.APPLY_THEN_WRITE;
import static io.dendrite.tardis.Technique.WriteAction.BUFFER;
import static io.dendrite.tardis.Technique.WriteAction.WRITE;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Every cell of the thesis' Tables 4.2 and 4.3, and Recon's normal-mode row (see {@link Technique}). */
class TechniqueTableTest {

  @Test
  void inFailedModeEveryTechniqueRefusesMissesAndBuffersWrites() {
    for (Technique technique : Technique.values()) {
      for (boolean buffered : new boolean[] {false, true}) {
        assertThat(technique.onMiss(Mode.FAILED, buffered)).isEqualTo(UNAVAILABLE);
        assertThat(technique.onWrite(Mode.FAILED, buffered)).isEqualTo(BUFFER);
      }
    }
  }

  @Test
  void inRecoveryModeEachTechniqueServesMissesAndWritesItsOwnWay() {
    Map<Technique, Technique.MissAction> misses = new EnumMap<>(Technique.class);
    misses.put(Technique.TAR, UNAVAILABLE);
    misses.put(Technique.DIS, UNAVAILABLE);
    misses.put(Technique.TARD, APPLY_THEN_QUERY);
    misses.put(Technique.TARDIS, APPLY_THEN_QUERY);
    Map<Technique, Technique.WriteAction> writes = new EnumMap<>(Technique.class);
    writes.put(Technique.TAR, BUFFER);
    writes.put(Technique.DIS, APPLY_THEN_WRITE);
    writes.put(Technique.TARD, BUFFER);
    writes.put(Technique.TARDIS, APPLY_THEN_WRITE);
    for (Technique technique : Technique.values()) {
      for (boolean buffered : new boolean[] {false, true}) {
        assertThat(technique.onMiss(Mode.RECOVERY, buffered))
            .as("%s miss", technique)
            .isEqualTo(misses.get(technique));
        assertThat(technique.onWrite(Mode.RECOVERY, buffered))
            .as("%s write", technique)
            .isEqualTo(writes.get(technique));
      }
    }
  }

  @Test
  void inNormalModeACleanDocumentGoesToTheDataStoreAndABufferedOneAsInRecovery() {
    for (Technique technique : Technique.values()) {
      assertThat(technique.onMiss(Mode.NORMAL, false)).isEqualTo(QUERY);
      assertThat(technique.onWrite(Mode.NORMAL, false)).isEqualTo(WRITE);
      assertThat(technique.onMiss(Mode.NORMAL, true))
          .isEqualTo(technique.onMiss(Mode.RECOVERY, true));
      assertThat(technique.onWrite(Mode.NORMAL, true))
          .isEqualTo(technique.onWrite(Mode.RECOVERY, true));
    }
  }

  @Test
  void onlyNormalModeNeedsToLookForTheDocumentsBufferedWrite() {
    for (Technique technique : Technique.values()) {
      assertThat(technique.needsToKnowBuffered(Mode.NORMAL)).isTrue();
      assertThat(technique.needsToKnowBuffered(Mode.FAILED)).isFalse();
      assertThat(technique.needsToKnowBuffered(Mode.RECOVERY)).isFalse();
    }
  }
}
