package io.dendrite.testsupport;

/**
 * A ZooKeeper server and a name that belongs to one test, for the service (the group of processes) the test's
 * coordinators join, so that tests never see each other's members or ranges. What a test leaves in ZooKeeper stays
 * under that name (a few small nodes; the server's data lives under {@code target/services}).
 *
 * @param connectString {@code host:port} of the server
 * @param service a service name of the test's own
 */
public record ZooKeeperAddress(String connectString, String service) {}
