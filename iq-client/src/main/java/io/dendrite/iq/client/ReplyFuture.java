package io.dendrite.iq.client;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The future of a request's reply, and of every stage derived from it ({@code thenApply}, {@code handle}, ...):
 * {@link #get()} and {@link #join()} read the reply off the connection in the calling thread instead of waiting
 * for another thread to hand it over (see {@link SocketConnection}); {@link #allOf} does the same for several
 * requests. Stages made by {@code CompletableFuture}'s own static methods ({@code allOf}, {@code completedFuture})
 * are plain futures: their replies are read by the client's background reader unless some thread waits on the
 * requests' own futures.
 */
final class ReplyFuture<T> extends CompletableFuture<T> {

  /** Reads (or waits for) the replies this future depends on, in the calling thread. */
  private final Runnable awaitReplies;

  ReplyFuture(OutgoingRequest command) {
    this.awaitReplies = command::awaitReply;
  }

  private ReplyFuture(Runnable awaitReplies) {
    this.awaitReplies = awaitReplies;
  }

  /** Like {@link CompletableFuture#allOf}, but waiting on it reads the replies of the parts that are requests. */
  static ReplyFuture<Void> allOf(List<? extends CompletableFuture<?>> parts) {
    ReplyFuture<Void> all = new ReplyFuture<>(() -> parts.forEach(ReplyFuture::awaitReplies));
    CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0]))
        .whenComplete(
            (done, failure) -> {
              if (failure != null) {
                all.completeExceptionally(failure);
              } else {
                all.complete(null);
              }
            });
    return all;
  }

  private static void awaitReplies(CompletableFuture<?> future) {
    if (future instanceof ReplyFuture<?> reply) {
      reply.awaitReplies.run();
    }
  }

  @Override
  public <U> CompletableFuture<U> newIncompleteFuture() {
    return new ReplyFuture<>(awaitReplies);
  }

  @Override
  public T get() throws InterruptedException, ExecutionException {
    // Where a thread starts to wait for replies (every wait of the client's own goes through here):
    // what its flight holds goes out first, since a reply, or a later stage, may wait on one of
    // them.
    Flight.writeHeldOfCurrentThread();
    awaitReplies
        .run(); // also when done: the thread's round-trip count notes that it waited (ThreadTrips)
    return super.get();
  }

  @Override
  public T join() {
    Flight.writeHeldOfCurrentThread();
    awaitReplies.run();
    return super.join();
  }
}
