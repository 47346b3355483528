package io.dendrite.coordination;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first frames of every forwarding connection, before any request: each side proves it holds the service's
 * shared secret ({@link ForwardingSecurity#sharedSecret}) without sending it.
 *
 * <pre>
 * server: 'C' version flags server-nonce(32)       flags bit 0: a secret is required
 * client: 'A' client-nonce(32) HMAC-SHA256(secret, "dendrite-forwarding client" || server-nonce || client-nonce)
 * server: 'P' HMAC-SHA256(secret, "dendrite-forwarding server" || server-nonce || client-nonce)
 *     or: 'E' a UTF-8 reason, and the server closes the connection
 * </pre>
 *
 * Without a secret ({@link ForwardingSecurity#unauthenticatedOnLoopback}) the same frames travel without nonce or
 * MAC. Fresh nonces on both sides make a recorded answer useless on another connection, and the two labels keep one
 * side's proof from serving as the other's. A connection that sends anything else first, fails the proof, or does not
 * finish within the handshake timeout is answered {@code 'E'} and closed: nothing it sent runs.
 */
final class ForwardingHandshake {
  private ForwardingHandshake() {}

  private static final Logger LOG = LoggerFactory.getLogger(ForwardingHandshake.class);

  static final byte CHALLENGE = 'C';
  static final byte ANSWER = 'A';
  static final byte PROOF = 'P';
  static final byte REFUSAL = 'E';
  static final byte VERSION = 1;
  static final Duration TIMEOUT = Duration.ofSeconds(10);

  private static final int NONCE_BYTES = 32;
  private static final int MAC_BYTES = 32;
  private static final byte SECRET_REQUIRED = 1;
  private static final byte[] CLIENT_LABEL =
      "dendrite-forwarding client".getBytes(StandardCharsets.UTF_8);
  private static final byte[] SERVER_LABEL =
      "dendrite-forwarding server".getBytes(StandardCharsets.UTF_8);
  private static final SecureRandom RANDOM = new SecureRandom();

  /** Where the setting lives, for every refusal to name it. */
  static final String SETTING =
      "ManyProcesses.forwardingSecurity (ForwardingSecurity.sharedSecret, the same in every process)";

  static byte[] mac(byte[] secret, byte[] label, byte[] serverNonce, byte[] clientNonce) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret, "HmacSHA256"));
      mac.update(label);
      mac.update(serverNonce);
      mac.update(clientNonce);
      return mac.doFinal();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is missing from this JDK", e);
    }
  }

  private static byte[] nonce() {
    byte[] nonce = new byte[NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    return nonce;
  }

  private static byte[] read(ByteBuf frame, int length) {
    byte[] bytes = new byte[length];
    frame.readBytes(bytes);
    return bytes;
  }

  private static void send(ChannelHandlerContext ctx, byte type, byte[]... parts) {
    ByteBuf out = ctx.alloc().buffer();
    out.writeByte(type);
    for (byte[] part : parts) {
      out.writeBytes(part);
    }
    ctx.writeAndFlush(out);
  }

  /** The server's side: challenges a new connection and lets its frames through only once it proved the secret. */
  static final class ServerSide extends SimpleChannelInboundHandler<ByteBuf> {
    private final ForwardingSecurity security;
    private final byte[] serverNonce = nonce();
    private boolean refused;

    ServerSide(ForwardingSecurity security) {
      this.security = security;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      ByteBuf out = ctx.alloc().buffer();
      out.writeByte(CHALLENGE);
      out.writeByte(VERSION);
      out.writeByte(security.authenticated() ? SECRET_REQUIRED : 0);
      if (security.authenticated()) {
        out.writeBytes(serverNonce);
      }
      ctx.writeAndFlush(out);
      ctx.executor()
          .schedule(
              () -> {
                if (ctx.pipeline().get(ServerSide.class) == this) {
                  refuse(ctx, "no handshake within " + TIMEOUT.toSeconds() + " s");
                }
              },
              TIMEOUT.toMillis(),
              TimeUnit.MILLISECONDS);
      ctx.fireChannelActive();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
      if (refused) {
        return;
      }
      if (!frame.isReadable() || frame.readByte() != ANSWER) {
        refuse(
            ctx,
            "a forwarded request before the handshake: nothing ran (every process of the service needs "
                + SETTING
                + ")");
        return;
      }
      if (!security.authenticated()) {
        send(ctx, PROOF);
        ctx.pipeline().remove(this);
        return;
      }
      if (frame.readableBytes() != NONCE_BYTES + MAC_BYTES) {
        refuse(
            ctx,
            "this process requires the forwarding secret and the peer sent no proof of it: set "
                + SETTING);
        return;
      }
      byte[] clientNonce = read(frame, NONCE_BYTES);
      byte[] answer = read(frame, MAC_BYTES);
      byte[] expected = mac(security.secret(), CLIENT_LABEL, serverNonce, clientNonce);
      if (!MessageDigest.isEqual(expected, answer)) {
        refuse(ctx, "wrong forwarding secret: nothing ran; check " + SETTING);
        return;
      }
      send(ctx, PROOF, mac(security.secret(), SERVER_LABEL, serverNonce, clientNonce));
      ctx.pipeline().remove(this);
    }

    private void refuse(ChannelHandlerContext ctx, String reason) {
      refused = true;
      LOG.warn("refused forwarding connection from {}: {}", ctx.channel().remoteAddress(), reason);
      ByteBuf out = ctx.alloc().buffer();
      out.writeByte(REFUSAL);
      out.writeBytes(reason.getBytes(StandardCharsets.UTF_8));
      ctx.writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
    }
  }

  /**
   * The client's side: answers the challenge, checks the server's proof, then gets out of the way; {@code done}
   * completes when requests may be sent, or fails with {@link ForwardingException.Reason#NOT_AUTHENTICATED} (the
   * peer and this process disagree on the secret or TLS trust) or {@link
   * ForwardingException.Reason#OWNER_UNREACHABLE} (the connection went before the handshake finished).
   */
  static final class ClientSide extends SimpleChannelInboundHandler<ByteBuf> {
    private final ForwardingSecurity security;
    private final String endpoint;
    private final CompletableFuture<Void> done;
    private final byte[] clientNonce = nonce();
    private byte[] serverNonce;

    ClientSide(ForwardingSecurity security, String endpoint, CompletableFuture<Void> done) {
      this.security = security;
      this.endpoint = endpoint;
      this.done = done;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      ctx.executor()
          .schedule(
              () ->
                  fail(
                      ctx,
                      new ForwardingException(
                          ForwardingException.Reason.OWNER_UNREACHABLE,
                          "no forwarding handshake from "
                              + endpoint
                              + " within "
                              + TIMEOUT.toSeconds()
                              + " s")),
              TIMEOUT.toMillis(),
              TimeUnit.MILLISECONDS);
      ctx.fireChannelActive();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
      if (done.isDone() || !frame.isReadable()) {
        return;
      }
      byte type = frame.readByte();
      if (type == REFUSAL) {
        refused(
            ctx, endpoint + " refused the connection: " + frame.toString(StandardCharsets.UTF_8));
      } else if (type == CHALLENGE && serverNonce == null && frame.readableBytes() >= 2) {
        answer(ctx, frame);
      } else if (type == PROOF && serverNonce != null) {
        boolean proven =
            !security.authenticated()
                || (frame.readableBytes() == MAC_BYTES
                    && MessageDigest.isEqual(
                        mac(security.secret(), SERVER_LABEL, serverNonce, clientNonce),
                        read(frame, MAC_BYTES)));
        if (!proven) {
          refused(
              ctx,
              endpoint
                  + " did not prove it holds the forwarding secret: nothing was sent; check "
                  + SETTING);
          return;
        }
        ctx.pipeline().remove(this);
        done.complete(null);
      } else {
        refused(
            ctx,
            endpoint + " does not speak the forwarding handshake (frame '" + (char) type + "')");
      }
    }

    private void answer(ChannelHandlerContext ctx, ByteBuf challenge) {
      byte version = challenge.readByte();
      boolean secretRequired = (challenge.readByte() & SECRET_REQUIRED) != 0;
      if (version != VERSION) {
        refused(
            ctx, endpoint + " speaks forwarding handshake version " + version + ", not " + VERSION);
      } else if (secretRequired && !security.authenticated()) {
        refused(
            ctx,
            endpoint + " requires the forwarding secret and this process has none: set " + SETTING);
      } else if (!secretRequired && security.authenticated()) {
        refused(
            ctx,
            endpoint
                + " takes forwarded requests without a secret, and this process sends requests only to"
                + " processes that prove the secret: set "
                + SETTING
                + " there too");
      } else if (!secretRequired) {
        serverNonce = new byte[0];
        send(ctx, ANSWER);
      } else if (challenge.readableBytes() != NONCE_BYTES) {
        refused(ctx, endpoint + " sent a malformed challenge");
      } else {
        serverNonce = read(challenge, NONCE_BYTES);
        send(
            ctx,
            ANSWER,
            clientNonce,
            mac(security.secret(), CLIENT_LABEL, serverNonce, clientNonce));
      }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
      if (event instanceof SslHandshakeCompletionEvent tls && !tls.isSuccess()) {
        fail(
            ctx,
            new ForwardingException(
                ForwardingException.Reason.NOT_AUTHENTICATED,
                "TLS handshake with "
                    + endpoint
                    + " failed ("
                    + tls.cause()
                    + "): nothing was sent; check the TLS contexts of "
                    + SETTING,
                tls.cause()));
      }
      ctx.fireUserEventTriggered(event);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      fail(
          ctx,
          new ForwardingException(
              ForwardingException.Reason.OWNER_UNREACHABLE,
              endpoint + " closed the connection during the forwarding handshake"));
      ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      fail(
          ctx,
          new ForwardingException(
              ForwardingException.Reason.OWNER_UNREACHABLE,
              "forwarding handshake with " + endpoint + " failed: " + cause,
              cause));
    }

    private void refused(ChannelHandlerContext ctx, String reason) {
      fail(ctx, new ForwardingException(ForwardingException.Reason.NOT_AUTHENTICATED, reason));
    }

    private void fail(ChannelHandlerContext ctx, ForwardingException failure) {
      if (done.completeExceptionally(failure)) {
        ctx.close();
      }
    }
  }
}
