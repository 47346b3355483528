/**
 * The write-back engine kernel: the machinery every engine over buffered writes is built of, shared by the
 * write-back engines of this module ({@code DocumentWriteBack}, {@code RangeWriteBack}, {@code SessionWriteBack})
 * and by TARDIS, whose teleported writes are buffered writes under keys of their own.
 *
 * <h2>What is here</h2>
 *
 * <ul>
 *   <li><b>Buffered writes</b>: {@link io.dendrite.writeback.kernel.BufferedWrites} (one compacted buffered write per
 *       document: write, write-through fallback or refusal, drain, idempotent conversion), named by {@link
 *       io.dendrite.writeback.kernel.BufferedWriteKey} ({@code BW:} for write-back, {@code TW:} for TARDIS); {@link
 *       io.dendrite.writeback.kernel.KnownValues} for engines that alone write their documents; {@link
 *       io.dendrite.writeback.kernel.UndecodableValues}, which moves a value no engine can read aside.
 *   <li><b>Pinned replicas</b>: {@link io.dendrite.writeback.kernel.PinnedReplicas} (every value on R servers,
 *       pinned), {@link io.dendrite.writeback.kernel.PinnedLines} (the shape of every index kept in the cache), {@link
 *       io.dendrite.writeback.kernel.PinnedBudget}, and {@link io.dendrite.writeback.kernel.ReplicaRepair}, which
 *       restores a restarted or replaced server's copies.
 *   <li><b>Pending-writes partitions</b>: {@link io.dendrite.writeback.kernel.PendingWritesPartition}, where every
 *       buffered write is listed so that any process finds and drains it.
 *   <li><b>Locks</b>: {@link io.dendrite.writeback.kernel.BufferedWriteLocks} (the replicas' Q leases, in-process
 *       locks for an engine that alone writes its documents, or {@link io.dendrite.writeback.kernel.RedleaseLocks}
 *       on stock memcached), {@link io.dendrite.writeback.kernel.LeaseLostException} for a holder that must start
 *       again, and {@link io.dendrite.writeback.kernel.EngineClaim}, the cache tier's record of which engines may
 *       change its buffered writes.
 *   <li><b>Drain threads</b>: {@link io.dendrite.writeback.kernel.DrainThreads} and {@link
 *       io.dendrite.writeback.kernel.DrainWorker} (TARDIS's recovery workers are these), over a {@link
 *       io.dendrite.writeback.kernel.RetryingStore}.
 *   <li><b>Range writes</b>: {@link io.dendrite.writeback.kernel.BufferedIntervals}, BuWrInT over any {@link
 *       io.dendrite.writeback.kernel.DocumentEngine} (a per-document engine's steps), with its log in the cache.
 *   <li><b>Reporting</b>: {@link io.dendrite.writeback.kernel.EngineCounters} (an engine's {@code WriteBackMetrics}),
 *       {@link io.dendrite.writeback.kernel.SharedSnapshot} (one snapshot for all of a binder's meters), {@link
 *       io.dendrite.writeback.kernel.FirstWarnings}.
 * </ul>
 *
 * <h2>Who may use it</h2>
 *
 * The engines' packages of this module, and TARDIS through the module's qualified export ({@code exports
 * io.dendrite.writeback.kernel to io.dendrite.tardis}); no application, and no other module. It is not API: it
 * changes with the engines, and nothing exported takes or returns one of its types, so an application never meets
 * one (TARDIS's front ends wrap what they use, as the write-back engines do).
 *
 * <h2>Its contract with them</h2>
 *
 * <ul>
 *   <li>A buffered write, a session object, a listing or a log record is changed only by a holder of its lock,
 *       through {@link io.dendrite.writeback.kernel.PinnedReplicas} on all R replicas, and deleted only once what it
 *       held reached the data store (or, undecodable, was moved aside): an engine that goes around this loses or
 *       doubles writes.
 *   <li>What an engine buffers is listed before it is acknowledged, so that any engine over the same cache servers
 *       (this process restarted, another process, TARDIS's recovery) finds and applies it: every process over one
 *       cache tier uses the same key prefix, R and partitions for the same buffered writes.
 *   <li>The failures users see are the exported ones ({@code io.dendrite.writeback.engine}: {@code
 *       UndecodableValueException}, {@code BufferRefusedException}) or the IQ client's; the kernel's own exceptions
 *       ({@link io.dendrite.writeback.kernel.LeaseLostException}, {@link
 *       io.dendrite.writeback.kernel.IdempotentFormRefusedException}, {@link
 *       io.dendrite.writeback.kernel.ServerMemoryFullException}) say what the calling engine must do next.
 *   <li>Everything here is thread-safe unless its class says otherwise; objects that own threads ({@link
 *       io.dendrite.writeback.kernel.DrainThreads}, {@link io.dendrite.writeback.kernel.ReplicaRepair}, {@link
 *       io.dendrite.writeback.kernel.BufferedIntervals}) are closed by the engine that made them.
 *   <li>It uses the change vocabulary, the data-store interface and {@code io.dendrite.writeback.engine}, and never
 *       an engine's package: the layering {@code change, store <- engine <- kernel <- document, session <-
 *       io.dendrite.writeback} has no cycle, and {@code WriteBackPackagesTest} pins it.
 * </ul>
 *
 * <h2>How range write-back reaches a per-document engine</h2>
 *
 * {@link io.dendrite.writeback.kernel.BufferedIntervals} needs steps of the engine it is built on that are not API
 * (start a multi-document write in steps, drain documents as a miss must, list what is buffered, register with the
 * replica repair): {@link io.dendrite.writeback.kernel.DocumentEngine}. {@code DocumentWriteBack} implements it in a
 * private class and hands it out package-privately, to {@code RangeWriteBack}, which therefore lives in the same
 * package ({@code io.dendrite.writeback.document}); TARDIS implements it over its teleported writes and builds {@link
 * io.dendrite.writeback.kernel.BufferedIntervals} itself. Java lets one package reach another's non-public members only
 * through a public member or a global hook (the static trampoline this replaced); sharing a package needs neither.
 */
package io.dendrite.writeback.kernel;
