package io.dendrite.iq.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/** The TLS context of {@code --tls-keystore}: the server's certificate and key from a PKCS#12 keystore. */
public final class ServerTls {
  private ServerTls() {}

  /**
   * A server context holding the keystore's key and certificate chain.
   *
   * @param passwordFile its first line is the keystore's (and key's) password, so it never shows in a process list
   * @throws IllegalArgumentException when the keystore cannot be read with that password
   */
  public static SSLContext fromKeystore(Path keystore, Path passwordFile) {
    try {
      char[] password =
          Files.readAllLines(passwordFile, StandardCharsets.UTF_8).stream()
              .findFirst()
              .orElse("")
              .toCharArray();
      KeyStore store = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(keystore)) {
        store.load(in, password);
      }
      KeyManagerFactory keys =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keys.init(store, password);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(keys.getKeyManagers(), null, null);
      return context;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the TLS keystore " + keystore, e);
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("cannot use the TLS keystore " + keystore, e);
    }
  }
}
