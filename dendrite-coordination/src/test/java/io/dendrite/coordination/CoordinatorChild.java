package io.dendrite.coordination;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A process that owns ranges and "serves" them, for {@link OwnerPauseIT}: every 5 ms it asks {@link
 * ZooKeeperOwnership#owns} for each range it gained and prints the set it may serve whenever the set changes. When
 * it finds it was paused (a gap of over 500 ms between two checks), it prints what the first check after the pause
 * allowed: {@code RESUMED [..]}.
 *
 * <p>Arguments: connect string, service, member, session timeout in ms, then the ranges.
 */
public final class CoordinatorChild {
  private CoordinatorChild() {}

  public static void main(String[] args) throws Exception {
    GainedRanges gained = new GainedRanges();
    List<String> ranges = List.of(args).subList(4, args.length);
    ZooKeeperOwnership coordinator =
        ZooKeeperOwnership.builder()
            .connectString(args[0])
            .service(args[1])
            .member(args[2])
            .sessionTimeout(Duration.ofMillis(Long.parseLong(args[3])))
            .ranges(ranges)
            .listener(gained)
            .start();
    Map<String, Long> serving = new TreeMap<>();
    long last = System.nanoTime();
    while (true) {
      Map<String, Long> now = new TreeMap<>();
      gained.epochs.forEach(
          (range, epoch) -> {
            if (coordinator.owns(range, epoch)) {
              now.put(range, epoch);
            }
          });
      long at = System.nanoTime();
      if (at - last > 500_000_000L) {
        System.out.println("RESUMED " + now);
      }
      if (!now.equals(serving)) {
        System.out.println("SERVING " + now);
        serving = now;
      }
      last = at;
      Thread.sleep(5);
    }
  }
}
