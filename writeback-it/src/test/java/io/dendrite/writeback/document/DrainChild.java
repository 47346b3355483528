package io.dendrite.writeback.document;

import static io.dendrite.writeback.change.Change.addToSet;
import static io.dendrite.writeback.change.Change.inc;
import static io.dendrite.writeback.change.Change.push;
import static io.dendrite.writeback.change.Change.set;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.store.mongodb.MongoStore;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.writeback.ForwardingStore;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import io.dendrite.writeback.kernel.PinnedReplicas;
import io.dendrite.writeback.store.DataStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The application {@link CrashMidDrainIT} kills: it buffers non-idempotent writes ({@code $inc}, {@code $push},
 * {@code $addToSet}, with {@code $set}) to documents that already exist in the store, with no drain thread, and
 * prints {@code ack <id> <base64 of the encoded changes>} for every acknowledged write ({@code unknown <id> ...} for
 * one the engine reported as not done, after which the document is {@code skipped}), then {@code buffered}. Then
 * it drains slowly, printing {@code applying <id>} and {@code applied <id>} around every store apply and pausing
 * there, so that the parent's SIGKILL lands at a chosen step of Algorithm 2.
 *
 * <p>Arguments: {@code mysql <jdbc url> | mongo <connection string> <database>}, then {@code <cache servers>
 * <replicas> <documents> <pause before apply ms> <pause after apply ms> engine|naive}. {@code naive} drains
 * without Algorithm 2, applying each buffered write as it is and deleting it afterwards: the negative control,
 * whose crash after an apply must show up as an increment applied twice.
 */
public final class DrainChild {
  static final String COLLECTION = "users";
  static final int ROUNDS = 3;

  /** Documents per drain batch: small, so that a drain makes many applies for the parent to kill between. */
  static final int DRAIN_BATCH = 4;

  private static final int WRITERS = 4;

  private DrainChild() {}

  public static void main(String[] args) throws Exception {
    boolean mongo = args[0].equals("mongo");
    int next = mongo ? 3 : 2;
    String cacheServers = args[next];
    int replicas = Integer.parseInt(args[next + 1]);
    int documents = Integer.parseInt(args[next + 2]);
    Duration pauseBefore = Duration.ofMillis(Long.parseLong(args[next + 3]));
    Duration pauseAfter = Duration.ofMillis(Long.parseLong(args[next + 4]));
    boolean naive = args[next + 5].equals("naive");

    Duration timeout = Duration.ofSeconds(30);
    DataStore realStore =
        mongo ? MongoStore.open(args[1], args[2], timeout) : MySqlStore.open(args[1], 4, timeout);
    DataStore store = new PausingStore(realStore, pauseBefore, pauseAfter);
    IqClient cache =
        IqClient.builder()
            .servers(cacheServers.split(","))
            .requestTimeout(Duration.ofSeconds(2))
            .build();
    try (DocumentWriteBack writeBack =
        DocumentWriteBack.builder()
            .cache(cache)
            .store(store)
            .replicas(replicas)
            .partitions(4)
            .drainThreads(0)
            .drainBatch(DRAIN_BATCH)
            .storeRetryDeadline(Duration.ofMillis(500))
            .build()) {
      bufferWrites(writeBack, documents, mongo);
      System.out.println("buffered");
      if (naive) {
        drainNaively(cache, replicas, store, documents);
      } else {
        writeBack.drainNow();
      }
      System.out.println("drained");
    }
  }

  /** Writer threads own disjoint documents, so each document's acknowledgements print in its buffering order. */
  private static void bufferWrites(DocumentWriteBack writeBack, int documents, boolean mongo)
      throws Exception {
    ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
    List<Future<?>> done = new ArrayList<>();
    for (int writer = 0; writer < WRITERS; writer++) {
      int first = writer + 1;
      done.add(
          writers.submit(
              () -> {
                Set<Integer> unknown = new HashSet<>();
                for (int round = 0; round < ROUNDS; round++) {
                  for (int id = first; id <= documents; id += WRITERS) {
                    ChangeSequence changes = mongo ? documentWrite(id, round) : rowWrite(id, round);
                    String encoded = Base64.getEncoder().encodeToString(changes.encode());
                    if (unknown.contains(id)) {
                      System.out.println("skipped " + id);
                      continue;
                    }
                    try {
                      writeBack.write(new EntityKey(COLLECTION, id), changes);
                    } catch (IqException notDone) {
                      // Not acknowledged, and perhaps applied on some replicas (a commit that
                      // lapsed
                      // under load): an application cannot tell, so this one writes the document no
                      // more and the parent accepts it either way.
                      System.out.println("unknown " + id + " " + encoded);
                      unknown.add(id);
                      continue;
                    }
                    System.out.println("ack " + id + " " + encoded);
                  }
                }
                return null;
              }));
    }
    for (Future<?> writer : done) {
      writer.get();
    }
    writers.shutdown();
  }

  private static ChangeSequence rowWrite(int id, int round) {
    return switch (round) {
      case 0 -> ChangeSequence.of(inc("score", id % 7 + 1));
      case 1 -> ChangeSequence.of(set("name", "r1-" + id), inc("visits", 1));
      default -> ChangeSequence.of(inc("score", 3), inc("visits", 2));
    };
  }

  private static ChangeSequence documentWrite(int id, int round) {
    return switch (round) {
      case 0 -> ChangeSequence.of(inc("visits", id % 7 + 1), push("log", "a" + id));
      case 1 -> ChangeSequence.of(addToSet("tags", "t" + id % 3), set("name", "r1-" + id));
      default -> ChangeSequence.of(inc("visits", 3), push("log", "b"), addToSet("tags", "t0"));
    };
  }

  /** The broken drain of the negative control: apply first, delete after, with no idempotent form in between. */
  private static void drainNaively(IqClient cache, int replicas, DataStore store, int documents) {
    PinnedReplicas pinned = new PinnedReplicas(cache, replicas);
    for (int id = 1; id <= documents; id++) {
      EntityKey key = new EntityKey(COLLECTION, id);
      String bufferedKey = BufferedWriteKey.of(key);
      Optional<byte[]> buffered = pinned.get(bufferedKey);
      if (buffered.isPresent()) {
        store.apply(List.of(new EntityChanges(key, ChangeSequence.decode(buffered.get()))));
        pinned.delete(bufferedKey);
      }
    }
  }

  /** Reports every apply and pauses around it, so the parent can kill this process at a known step. */
  private static final class PausingStore extends ForwardingStore {
    private final Duration before;
    private final Duration after;

    PausingStore(DataStore store, Duration before, Duration after) {
      super(store);
      this.before = before;
      this.after = after;
    }

    @Override
    public void apply(List<EntityChanges> batch) {
      String ids =
          String.join(
              ",", batch.stream().map(entity -> String.valueOf(entity.key().id())).toList());
      System.out.println("applying " + ids);
      pause(before);
      super.apply(batch);
      System.out.println("applied " + ids);
      pause(after);
    }

    private static void pause(Duration pause) {
      try {
        Thread.sleep(pause.toMillis());
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
