package dev.arbor.bench;

/**
 * What one invocation cost on the wire, as seen by the driver: the machine-independent figures.
 *
 * @param roundTrips commands sent (each is one request and one reply, getMore included)
 * @param docsReturned documents in the replies' cursor batches (and findAndModify values)
 * @param docsWritten documents inserted, modified or removed, as the replies report them
 * @param bytesSent BSON size of the commands
 * @param bytesReceived BSON size of the replies
 */
record Counts(long roundTrips, long docsReturned, long docsWritten, long bytesSent,
    long bytesReceived) {
  static final Counts ZERO = new Counts(0, 0, 0, 0, 0);

  Counts plus(Counts o) {
    return new Counts(roundTrips + o.roundTrips, docsReturned + o.docsReturned,
        docsWritten + o.docsWritten, bytesSent + o.bytesSent, bytesReceived + o.bytesReceived);
  }
}
