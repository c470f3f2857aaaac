package dev.arbor.tools;

/**
 * What one invocation cost on the wire, as seen by the driver: the machine-independent figures
 * that a {@link CommandMeter} counts while armed.
 *
 * @param roundTrips commands sent (each is one request and one reply, getMore included)
 * @param docsReturned documents in the replies' cursor batches (and findAndModify values)
 * @param docsWritten documents inserted, modified or removed, as the replies report them
 * @param bytesSent BSON size of the commands
 * @param bytesReceived BSON size of the replies
 * @param lockRoundTrips of the round trips, those that only touch the store's lock and journal
 *     documents (its all-or-nothing protocol), not nodes
 * @param lockDocsWritten of the documents written, lock and journal documents
 */
public record Counts(long roundTrips, long docsReturned, long docsWritten, long bytesSent,
    long bytesReceived, long lockRoundTrips, long lockDocsWritten) {}
