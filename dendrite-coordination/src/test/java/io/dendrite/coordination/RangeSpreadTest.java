package io.dendrite.coordination;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class RangeSpreadTest {

  private static List<String> names(String prefix, int count) {
    return IntStream.range(0, count).mapToObj(i -> prefix + i).toList();
  }

  @Test
  void everyRangeGoesToOneMemberAndEachMemberGetsAnEvenShare() {
    for (int members = 1; members <= 7; members++) {
      for (int ranges : new int[] {1, 5, 12, 64}) {
        Map<String, String> spread = RangeSpread.of(names("p", members), names("r", ranges));
        assertThat(spread).hasSize(ranges);
        Map<String, Integer> share = new HashMap<>();
        spread.values().forEach(member -> share.merge(member, 1, Integer::sum));
        int floor = ranges / members;
        assertThat(share.values()).allSatisfy(n -> assertThat(n).isBetween(floor, floor + 1));
        assertThat(share.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(ranges);
      }
    }
  }

  @Test
  void everyProcessComputesTheSameSpreadWhateverOrderItSeesTheMembersIn() {
    List<String> members = new ArrayList<>(names("p", 5));
    Map<String, String> first = RangeSpread.of(members, names("r", 40));
    Collections.reverse(members);
    assertThat(RangeSpread.of(members, names("r", 40))).isEqualTo(first);
  }

  @Test
  void aJoiningMemberTakesAboutItsShareAndLittleElseMoves() {
    Map<String, String> before = RangeSpread.of(names("p", 3), names("r", 64));
    Map<String, String> after = RangeSpread.of(names("p", 4), names("r", 64));
    long moved = before.keySet().stream().filter(r -> !before.get(r).equals(after.get(r))).count();
    // 16 must move to the new member; a few more may shift to keep the others even.
    assertThat(moved).isBetween(16L, 28L);
  }

  @Test
  void noMembersPlaceNothing() {
    assertThat(RangeSpread.of(List.of(), names("r", 3))).isEmpty();
  }
}
