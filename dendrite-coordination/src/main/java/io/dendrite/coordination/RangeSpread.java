package io.dendrite.coordination;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Where each range should live, computed alike by every process from the same view of the live members: an even
 * spread (each member gets ⌊R/M⌋ or ⌈R/M⌉ of R ranges over M members) that moves few ranges when a member comes or
 * goes. Each range ranks the members by a hash of the pair (rendezvous hashing) and goes to the highest-ranked one
 * with room left.
 */
final class RangeSpread {
  private RangeSpread() {}

  /** Range to member; empty when there are no members. */
  static Map<String, String> of(Iterable<String> members, Iterable<String> ranges) {
    List<String> sortedMembers = new ArrayList<>(new TreeSet<>(toList(members)));
    List<String> sortedRanges = new ArrayList<>(new TreeSet<>(toList(ranges)));
    Map<String, String> placement = new HashMap<>();
    if (sortedMembers.isEmpty()) {
      return placement;
    }
    int m = sortedMembers.size();
    int floor = sortedRanges.size() / m;
    int larger = sortedRanges.size() % m;
    // Which members take one range more: the first by a hash of their name, so that it does not
    // depend on the order they joined in.
    List<String> byHash = new ArrayList<>(sortedMembers);
    byHash.sort(
        Comparator.comparingLong((String member) -> hash(member, "")).thenComparing(s -> s));
    Map<String, Integer> room = new HashMap<>();
    for (int i = 0; i < m; i++) {
      room.put(byHash.get(i), floor + (i < larger ? 1 : 0));
    }
    for (String range : sortedRanges) {
      String best = null;
      long bestScore = 0;
      for (String member : sortedMembers) {
        if (room.get(member) == 0) {
          continue;
        }
        long score = hash(member, range);
        if (best == null || Long.compareUnsigned(score, bestScore) > 0) {
          best = member;
          bestScore = score;
        }
      }
      placement.put(range, best);
      room.merge(best, -1, Integer::sum);
    }
    return placement;
  }

  private static List<String> toList(Iterable<String> values) {
    List<String> list = new ArrayList<>();
    values.forEach(list::add);
    return list;
  }

  /** 64-bit FNV-1a of {@code member}, a separator and {@code range}, then a final mix. */
  private static long hash(String member, String range) {
    long h = 0xcbf29ce484222325L;
    for (byte b : (member + '\u0000' + range).getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    return h;
  }
}
