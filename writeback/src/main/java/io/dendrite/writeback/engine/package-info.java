/**
 * What every engine over buffered writes shows its users, whichever engine it is (the write-back engines of this
 * module and TARDIS): the settings they share ({@link io.dendrite.writeback.engine.EngineBuilder}, and {@link
 * io.dendrite.writeback.engine.WriteBackEngineBuilder} for the write-back engines), the metrics they report ({@link
 * io.dendrite.writeback.engine.WriteBackMetrics}), and the two ways a buffered write fails ({@link
 * io.dendrite.writeback.engine.UndecodableValueException}, {@link io.dendrite.writeback.engine.BufferRefusedException}).
 *
 * <p>Below the engine kernel ({@code io.dendrite.writeback.kernel}), which throws and counts these, and above the
 * change vocabulary only: nothing here knows an engine.
 */
package io.dendrite.writeback.engine;
