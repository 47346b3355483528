/**
 * Faults for integration tests: {@link io.dendrite.testsupport.faults.CuttableProxy} cuts or black-holes the
 * network to a real server that stays up, {@link io.dendrite.testsupport.faults.ChildJvm} runs code in a process
 * a test can kill with SIGKILL, {@link io.dendrite.testsupport.faults.ClosedPort} is a port where no server
 * answers.
 */
package io.dendrite.testsupport.faults;
