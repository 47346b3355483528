package io.dendrite.iq.server;

/**
 * The parsed request line and data of every command shaped like
 * {@code <cmd> <key> <flags> <exptime> <bytes> ...}: the set family, {@code cas}, {@code iqset},
 * {@code swap} and {@code sar}. They differ only in what follows {@code <bytes>}, which
 * {@link Shape} describes.
 *
 * @param key the key
 * @param flags client flags
 * @param expiresAtMillis wall-clock expiry, {@code 0} for never
 * @param pin the pimem field ({@code false} when absent)
 * @param number the CAS unique or lease token, {@code 0} when the shape has none
 * @param data the data block
 */
record StorageRequest(
    String key, long flags, long expiresAtMillis, boolean pin, long number, byte[] data) {

  /** What follows {@code <bytes>}. */
  enum Shape {
    /** {@code [<pimem>]}: set, add, replace, append, prepend. */
    PIMEM(false, true, false),
    /** {@code [<pimem>] <cas-unique>}. */
    CAS(true, true, true),
    /** {@code <token>}: iqset, sar. */
    TOKEN(true, false, false),
    /** {@code <token> [<pimem>]}: swap. */
    TOKEN_PIMEM(true, true, false);

    final boolean hasNumber;
    final boolean allowsPimem;
    final boolean pimemBeforeNumber;

    Shape(boolean hasNumber, boolean allowsPimem, boolean pimemBeforeNumber) {
      this.hasNumber = hasNumber;
      this.allowsPimem = allowsPimem;
      this.pimemBeforeNumber = pimemBeforeNumber;
    }
  }

  static StorageRequest parse(Arguments args, Shape shape, ServerState state) {
    int required = 4 + (shape.hasNumber ? 1 : 0);
    args.requireCount(required, required + (shape.allowsPimem ? 1 : 0));
    boolean hasPimem = args.size() > required;
    int numberIndex = hasPimem && shape.pimemBeforeNumber ? 5 : 4;
    int pimemIndex = shape.pimemBeforeNumber || !shape.hasNumber ? 4 : 5;
    return new StorageRequest(
        args.key(0),
        args.flags(1),
        state.expiryOf(args.exptime(2)),
        hasPimem && args.pimem(pimemIndex),
        shape.hasNumber ? args.number(numberIndex) : 0,
        args.block(0));
  }

  /** A new unpinned-or-pinned item from this request; the store assigns the CAS unique. */
  Item toItem() {
    return new Item(data, flags, expiresAtMillis, 0, pin);
  }
}
