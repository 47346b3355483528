package io.dendrite.iq.client;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Ketama-style consistent hashing: every server owns many points on a 32-bit circle, placed by the
 * MD5 of {@code "host:port-i"}, and a key belongs to the first point at or after the MD5 of the key.
 * Adding or removing one of N servers therefore moves only about 1/N of the keys, and every client
 * that lists the same servers agrees on where each key lives. Immutable.
 */
final class HashRing {

  private final long[] points;
  private final ServerAddress[] owners;
  private final int serverCount;

  HashRing(Collection<ServerAddress> servers, int pointsPerServer) {
    int groups = Math.max(1, pointsPerServer / 4);
    long[] rawPoints = new long[servers.size() * groups * 4];
    ServerAddress[] rawOwners = new ServerAddress[rawPoints.length];
    int n = 0;
    for (ServerAddress server : servers) {
      for (int group = 0; group < groups; group++) {
        byte[] digest = md5(server + "-" + group);
        for (int part = 0; part < 4; part++) {
          rawPoints[n] = point(digest, part);
          rawOwners[n] = server;
          n++;
        }
      }
    }
    Integer[] order = new Integer[n];
    Arrays.setAll(order, i -> i);
    // Ties (astronomically rare) are broken by server name so that the ring does not depend on list
    // order.
    Arrays.sort(
        order,
        (a, b) ->
            rawPoints[a] != rawPoints[b]
                ? Long.compare(rawPoints[a], rawPoints[b])
                : rawOwners[a].toString().compareTo(rawOwners[b].toString()));
    points = new long[n];
    owners = new ServerAddress[n];
    for (int i = 0; i < n; i++) {
      points[i] = rawPoints[order[i]];
      owners[i] = rawOwners[order[i]];
    }
    serverCount = servers.size();
  }

  /** The server that owns {@code key}. */
  ServerAddress serverFor(String key) {
    return owners[indexFor(key)];
  }

  /**
   * The owner of {@code key} followed by the next distinct servers clockwise: where {@code count}
   * replicas of it live.
   *
   * @throws IllegalArgumentException if fewer than {@code count} servers exist
   */
  List<ServerAddress> serversFor(String key, int count) {
    if (count < 1 || count > serverCount) {
      throw new IllegalArgumentException(
          "cannot place " + count + " replicas on " + serverCount + " servers");
    }
    Set<ServerAddress> found = new LinkedHashSet<>();
    for (int i = indexFor(key); found.size() < count; i = (i + 1) % points.length) {
      found.add(owners[i]);
    }
    return new ArrayList<>(found);
  }

  private int indexFor(String key) {
    if (serverCount == 1) {
      return 0; // every point is the one server's: no need to hash
    }
    long hash = point(md5(key), 0);
    int index = Arrays.binarySearch(points, hash);
    if (index < 0) {
      index = -index - 1;
    }
    return index == points.length ? 0 : index;
  }

  /** The unsigned little-endian 32-bit word {@code part} of a digest, as ketama reads it. */
  private static long point(byte[] digest, int part) {
    int base = part * 4;
    return ((long) (digest[base + 3] & 0xFF) << 24)
        | ((long) (digest[base + 2] & 0xFF) << 16)
        | ((long) (digest[base + 1] & 0xFF) << 8)
        | (digest[base] & 0xFF);
  }

  private static byte[] md5(String text) {
    return MD5.get()
        .digest(text.getBytes(StandardCharsets.UTF_8)); // digest() also resets it for the next use
  }

  /** Looking the algorithm up costs more than hashing a key, so each thread keeps its digest. */
  private static final ThreadLocal<MessageDigest> MD5 =
      ThreadLocal.withInitial(
          () -> {
            try {
              return MessageDigest.getInstance("MD5");
            } catch (NoSuchAlgorithmException e) {
              throw new IllegalStateException("every Java runtime provides MD5", e);
            }
          });
}
