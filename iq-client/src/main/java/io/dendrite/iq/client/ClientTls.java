package io.dendrite.iq.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.Collections;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** A client TLS context for {@link IqClient.Builder#tls}: trusting the certificates of a PKCS#12 keystore. */
public final class ClientTls {
  private ClientTls() {}

  /**
   * A context that trusts exactly the certificates in {@code keystore}, whether stored as trusted certificates or
   * as the certificate of a key entry (so the server's own keystore will do for a test), and nothing else.
   *
   * @throws IllegalArgumentException when the keystore cannot be read with {@code password} or holds no
   *     certificate
   */
  public static SSLContext trusting(Path keystore, char[] password) {
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(keystore)) {
        store.load(in, password);
      }
      KeyStore trusted = KeyStore.getInstance("PKCS12");
      trusted.load(null, null);
      for (String alias : Collections.list(store.aliases())) {
        Certificate certificate = store.getCertificate(alias);
        if (certificate != null) {
          trusted.setCertificateEntry(alias, certificate);
        }
      }
      if (trusted.size() == 0) {
        throw new IllegalArgumentException(keystore + " holds no certificate");
      }
      TrustManagerFactory trust =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init(trusted);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, trust.getTrustManagers(), null);
      return context;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + keystore, e);
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("cannot use " + keystore + " as a trust store", e);
    }
  }
}
