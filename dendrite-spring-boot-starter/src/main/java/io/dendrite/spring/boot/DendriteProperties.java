package io.dendrite.spring.boot;

import io.dendrite.core.WritePolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * The {@code dendrite.*} properties: every Dendrite the application builds through {@link Dendrites} gets these
 * settings. Nothing starts unless {@code dendrite.cache.servers} is set. A value Dendrite refuses fails start-up with
 * a message naming the property ({@link PropertyCheck}).
 *
 * @param cache the IQ cache servers and how to reach them
 * @param writePolicy write-around (the default: a write deletes the cached results it touches), write-through (a write
 *     updates them), or write-back (writes are buffered in the cache tier and drained to the database later; needs
 *     {@code dendrite-writeback} and a store: {@code dendrite-store-mysql} with a {@code DataSource}, or {@code
 *     dendrite-store-mongodb} with a {@code MongoClient})
 * @param replicas R, on how many cache servers each buffered write (write-back's, or TARDIS's during an outage) is
 *     pinned; default 2 (at most the number of servers: set 1 for a single server)
 * @param nearCache the near cache: decoded results in this process's heap in front of the cache servers
 * @param writeBack write-back's drain, when {@code write-policy} is write-back
 * @param tardis TARDIS: writes taken while the database is down (write-around and write-through)
 * @param processes many processes sharing the ranges through ZooKeeper, when {@code zookeeper} is set (needs {@code
 *     dendrite-coordination}); one process otherwise
 * @param store the data store's settings that the application's own client does not give
 * @param health what the Actuator health indicator reports
 */
@ConfigurationProperties("dendrite")
public record DendriteProperties(
    @DefaultValue Cache cache,
    @DefaultValue("write-around") WritePolicy writePolicy,
    Integer replicas,
    @DefaultValue NearCache nearCache,
    @DefaultValue WriteBack writeBack,
    @DefaultValue Tardis tardis,
    @DefaultValue Processes processes,
    @DefaultValue Store store,
    @DefaultValue Health health) {

  /**
   * The IQ cache servers.
   *
   * @param servers the servers, as {@code host:port}; setting them turns Dendrite on
   * @param login the login every connection makes first, for servers started with {@code --auth-file}
   * @param tls TLS to servers started with {@code --tls-keystore}
   * @param connectTimeout how long connecting may take
   * @param requestTimeout how long any single reply may take
   * @param connectionsPerServer pipelined connections to each server
   */
  public record Cache(
      List<String> servers,
      @DefaultValue Login login,
      @DefaultValue Tls tls,
      @DefaultValue("2s") Duration connectTimeout,
      @DefaultValue("5s") Duration requestTimeout,
      @DefaultValue("1") int connectionsPerServer) {}

  /**
   * A login to the cache servers.
   *
   * @param user the user; no login when unset
   * @param password its password
   */
  public record Login(String user, String password) {}

  /**
   * TLS to the cache servers.
   *
   * @param trustStore a PKCS#12 keystore whose certificates the client trusts; plain TCP when unset
   * @param trustStorePassword its password
   */
  public record Tls(Path trustStore, String trustStorePassword) {}

  /**
   * The near cache.
   *
   * @param maxSize its bound, in bytes of the results as the cache servers encode them; 0 turns it off
   */
  public record NearCache(@DefaultValue("64MB") DataSize maxSize) {}

  /**
   * Write-back's drain.
   *
   * @param drainDelay how long a buffered write waits before it is drained (writes to one row meanwhile merge)
   * @param drainOnClose how long shutting down keeps draining before it hands what is left over (left pinned and
   *     listed in the cache tier, where the next process drains it)
   */
  public record WriteBack(
      @DefaultValue("0s") Duration drainDelay, @DefaultValue("5s") Duration drainOnClose) {}

  /**
   * TARDIS.
   *
   * @param enabled whether writes the database fails are buffered in the cache tier and applied once it answers
   *     (needs {@code dendrite-tardis} and a store; not with write-back, which buffers writes already)
   * @param technique TAR, DIS, TARD or TARDIS (io.dendrite.tardis.Technique): when misses and writes apply the
   *     buffered writes they meet. A name rather than the enum, so that binding needs no TARDIS on the class path
   */
  public record Tardis(
      @DefaultValue("false") boolean enabled, @DefaultValue("TARDIS") String technique) {}

  /**
   * Many processes ({@code ManyProcesses}).
   *
   * @param zookeeper the ZooKeeper ensemble, {@code host:port,...}; setting it spreads each Dendrite's ranges over
   *     the service's processes
   * @param service the service's name in ZooKeeper, the same in every process; default {@code
   *     spring.application.name}
   * @param ranges how many ranges each Dendrite's domain is split into
   * @param sessionTimeout how long a process that stopped answering keeps its ranges
   * @param zookeeperUser ZooKeeper digest user; open ACLs when unset
   * @param zookeeperPassword its password
   * @param forwardingHost where this process takes requests other processes forward to it
   * @param forwardingPort the port for them; 0 picks a free one (per Dendrite)
   * @param forwardingSecretFile a file whose first line is the secret every process of the service shares (at least
   *     16 bytes); required unless {@code forwarding-loopback-only}
   * @param forwardingLoopbackOnly no secret: every process runs on this machine and forwards over loopback
   */
  public record Processes(
      String zookeeper,
      String service,
      @DefaultValue("16") int ranges,
      @DefaultValue("10s") Duration sessionTimeout,
      String zookeeperUser,
      String zookeeperPassword,
      @DefaultValue("127.0.0.1") String forwardingHost,
      @DefaultValue("0") int forwardingPort,
      Path forwardingSecretFile,
      @DefaultValue("false") boolean forwardingLoopbackOnly) {}

  /**
   * The data store.
   *
   * @param mongoDatabase the MongoDB database of the store over the application's {@code MongoClient}; default
   *     {@code spring.data.mongodb.database}
   */
  public record Store(String mongoDatabase) {}

  /**
   * The health indicator.
   *
   * @param maxBufferedWriteAge a buffered write waiting longer than this is reported (the database is not keeping up,
   *     or is down)
   */
  public record Health(@DefaultValue("60s") Duration maxBufferedWriteAge) {}
}
