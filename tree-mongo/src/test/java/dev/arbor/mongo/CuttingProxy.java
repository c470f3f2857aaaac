package dev.arbor.mongo;

import com.mongodb.ConnectionString;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A loopback TCP proxy between a MongoDB client and a server that reads the MongoDB wire protocol
 * and can cut the client's connection at a chosen command: either <i>before</i> forwarding it
 * (the server never sees it) or <i>after</i> the server has run it, dropping the server's reply
 * (the client never learns that it ran). A cut closes both sockets of that connection, the
 * client's with a reset ({@code SO_LINGER 0}); the proxy keeps accepting connections, so the
 * client reconnects as it would after a network failure.
 *
 * <pre>{@code
 * try (CuttingProxy proxy = new CuttingProxy(MongoTestServer.get().uri());
 *     MongoClient client = MongoClients.create(
 *         MongoTestServer.settings("mongodb://127.0.0.1:" + proxy.port()))) {
 *   proxy.arm(CuttingProxy.Cut.AFTER, 2); // the 2nd write from now runs; its reply is lost
 *   ...
 * }
 * }</pre>
 *
 * <p><b>Which commands.</b> Each message the client sends is framed by its header ({@code int32
 * messageLength, requestID, responseTo, opCode}, little-endian). An {@code OP_MSG} (2013) is
 * {@code uint32 flagBits}, then sections: kind 0 is one BSON document, the command, whose first
 * key is the command's name; kind 1 is a document sequence ({@code int32 size, cstring
 * identifier, documents}) — the driver sends the documents of {@code insert}, {@code update} and
 * {@code delete} that way — and is skipped; an optional CRC-32C follows when flag bit 0 is set.
 * A legacy {@code OP_QUERY} (2004, the driver's first handshake) is named by the first key of its
 * query document. By default only the <i>write commands</i> ({@link #WRITE_COMMANDS}) are
 * counted; {@link #arm(Cut, int, Predicate)} can count any others. An {@code OP_COMPRESSED}
 * message (2012) cannot be named without decompressing it: the proxy refuses it by cutting its
 * connection and remembering the refusal, which {@link #close()} reports — build clients without
 * compressors (the driver's default).
 *
 * <p><b>Counting.</b> Counted commands are numbered from 1 across all connections of the proxy
 * from the last {@link #arm}, {@link #count} or {@link #disarm}; {@link #commands()} lists their
 * names. The counter and the cut are decided under one monitor, in the order the proxy reads the
 * commands, so that concurrent connections (a background lease renewal) are counted too, in the
 * order they reach the proxy. A cut fires once; {@link #fired()} tells whether it did.
 *
 * <p>A cut after the command waits for its reply by message, not by time: the proxy remembers the
 * request's id before forwarding it, and the thread reading the server drops the message whose
 * {@code responseTo} is that id and cuts. A command sent with {@code moreToCome} (unacknowledged,
 * no reply) is cut right after it is forwarded. No thread of the proxy sleeps.
 */
final class CuttingProxy implements AutoCloseable {
  /** Where a cut falls relative to the command it is armed for. */
  enum Cut {
    /** The command is not forwarded: the server never sees it. */
    BEFORE,
    /** The command is forwarded and run; its reply is dropped and the connection cut. */
    AFTER,
    /**
     * The command is forwarded and run; its reply never comes, and the connection stays open (a
     * stalled network) until the client closes it.
     */
    STALL
  }

  /** The write commands of the driver: insert, update, delete and findAndModify. */
  static final Set<String> WRITE_COMMANDS = Set.of("insert", "update", "delete", "findAndModify");

  private static final int OP_REPLY = 1;
  private static final int OP_QUERY = 2004;
  private static final int OP_COMPRESSED = 2012;
  private static final int OP_MSG = 2013;
  private static final int CHECKSUM_PRESENT = 1;
  private static final int MORE_TO_COME = 1 << 1;
  private static final int MAX_MESSAGE = 64 * 1024 * 1024;

  private final InetSocketAddress server;
  private final ServerSocket listener;
  private final Thread acceptor;
  private final Set<Link> links = ConcurrentHashMap.newKeySet();

  // Guarded by this.
  private Predicate<String> counted = WRITE_COMMANDS::contains;
  private final List<String> commands = new ArrayList<>();
  private @Nullable Cut cut;
  private int cutAt;
  private boolean fired;
  private final List<String> refusals = new ArrayList<>();
  private volatile boolean closed;

  /** A proxy to the first host of the connection string {@code serverUri}. */
  CuttingProxy(String serverUri) throws IOException {
    this(hostOf(serverUri));
  }

  /** A proxy to {@code server}, listening on an ephemeral port of 127.0.0.1. */
  CuttingProxy(InetSocketAddress server) throws IOException {
    this.server = server;
    listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    acceptor = new Thread(this::accept, "cutting-proxy-" + listener.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  private static InetSocketAddress hostOf(String uri) {
    String host = new ConnectionString(uri).getHosts().get(0);
    int colon = host.lastIndexOf(':');
    return colon < 0 || host.endsWith("]") ? new InetSocketAddress(host, 27017)
        : new InetSocketAddress(host.substring(0, colon), Integer.parseInt(host.substring(colon
            + 1)));
  }

  /** The port the proxy listens on, on 127.0.0.1. */
  int port() {
    return listener.getLocalPort();
  }

  /**
   * Arms a cut at the {@code k}-th write command (1-based) from now, and restarts the count.
   *
   * @param k the command to cut at; one the client never sends leaves the cut unfired
   */
  void arm(Cut where, int k) {
    arm(where, k, WRITE_COMMANDS::contains);
  }

  /** Arms a cut at the {@code k}-th command from now whose name {@code which} accepts. */
  synchronized void arm(Cut where, int k, Predicate<String> which) {
    if (k < 1) {
      throw new IllegalArgumentException("k is 1-based: " + k);
    }
    restart(which);
    cut = where;
    cutAt = k;
  }

  /** Disarms and restarts the count of write commands (to count an uncut run). */
  void count() {
    count(WRITE_COMMANDS::contains);
  }

  /** Disarms and restarts the count, of the commands whose name {@code which} accepts. */
  synchronized void count(Predicate<String> which) {
    restart(which);
  }

  /** Disarms; the count goes on. */
  synchronized void disarm() {
    cut = null;
  }

  private void restart(Predicate<String> which) {
    counted = which;
    commands.clear();
    cut = null;
    fired = false;
  }

  /** How many counted commands the proxy read since the count restarted. */
  synchronized int counted() {
    return commands.size();
  }

  /** The names of the counted commands since the count restarted, in order. */
  synchronized List<String> commands() {
    return List.copyOf(commands);
  }

  /** Whether the armed cut fired. */
  synchronized boolean fired() {
    return fired;
  }

  /** Cuts every connection open now (as a network failure would), whatever is armed. */
  void cutAll() {
    for (Link l : links) {
      l.cut();
    }
  }

  /**
   * Stops listening and cuts every connection.
   *
   * @throws IllegalStateException if the proxy refused a message it could not read (compressed)
   */
  @Override
  public void close() {
    closed = true;
    try {
      listener.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    cutAll();
    try {
      acceptor.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (this) {
      if (!refusals.isEmpty()) {
        throw new IllegalStateException("The proxy refused messages it cannot read: " + refusals);
      }
    }
  }

  private void accept() {
    while (!closed) {
      Socket client;
      try {
        client = listener.accept();
      } catch (IOException e) {
        return; // closed
      }
      Socket upstream = new Socket();
      try {
        client.setTcpNoDelay(true);
        upstream.setTcpNoDelay(true);
        upstream.connect(server);
      } catch (IOException e) {
        reset(client);
        close(upstream);
        continue;
      }
      Link link = new Link(client, upstream);
      links.add(link);
      if (closed) {
        link.cut();
      }
      link.start();
    }
  }

  /** What to do with one message from the client. */
  private enum Action { FORWARD, CUT_BEFORE, CUT_AFTER, STALL }

  private synchronized Action decide(String name) {
    if (name.equals("OP_COMPRESSED")) {
      refusals.add(name);
      return Action.CUT_BEFORE;
    }
    if (!counted.test(name)) {
      return Action.FORWARD;
    }
    commands.add(name);
    if (cut != null && !fired && commands.size() == cutAt) {
      fired = true;
      return switch (cut) {
        case BEFORE -> Action.CUT_BEFORE;
        case AFTER -> Action.CUT_AFTER;
        case STALL -> Action.STALL;
      };
    }
    return Action.FORWARD;
  }

  /** One client connection and the proxy's connection to the server for it. */
  private final class Link {
    private static final long NONE = Long.MIN_VALUE;
    private final Socket client;
    private final Socket upstream;
    /** The request id whose reply is dropped and cut at, or NONE. */
    private volatile long cutOnReplyTo = NONE;
    /** The request id whose reply is dropped, the connection left open, or NONE. */
    private volatile long stallReplyTo = NONE;

    Link(Socket client, Socket upstream) {
      this.client = client;
      this.upstream = upstream;
    }

    void start() {
      String name = "cutting-proxy-" + port() + "-" + client.getPort();
      Thread up = new Thread(this::clientToServer, name + "-up");
      Thread down = new Thread(this::serverToClient, name + "-down");
      up.setDaemon(true);
      down.setDaemon(true);
      up.start();
      down.start();
    }

    private void clientToServer() {
      try {
        DataInputStream in = new DataInputStream(client.getInputStream());
        OutputStream out = upstream.getOutputStream();
        while (true) {
          byte[] message = readMessage(in);
          if (message == null) {
            break;
          }
          ByteBuffer b = ByteBuffer.wrap(message).order(ByteOrder.LITTLE_ENDIAN);
          switch (decide(commandName(b))) {
            case CUT_BEFORE -> {
              cut();
              return;
            }
            case CUT_AFTER -> {
              if (b.getInt(12) == OP_MSG && (b.getInt(16) & MORE_TO_COME) != 0) {
                out.write(message);
                out.flush();
                cut();
                return;
              }
              cutOnReplyTo = b.getInt(4);
            }
            case STALL -> stallReplyTo = b.getInt(4);
            case FORWARD -> { }
          }
          out.write(message);
          out.flush();
        }
      } catch (IOException e) {
        // a socket closed: end the link
      }
      cut();
    }

    private void serverToClient() {
      try {
        DataInputStream in = new DataInputStream(upstream.getInputStream());
        OutputStream out = client.getOutputStream();
        while (true) {
          byte[] message = readMessage(in);
          if (message == null) {
            break;
          }
          int responseTo = ByteBuffer.wrap(message).order(ByteOrder.LITTLE_ENDIAN).getInt(8);
          if (responseTo == cutOnReplyTo) {
            break; // the server ran the command; its reply is dropped
          }
          if (responseTo == stallReplyTo) {
            continue; // the server ran the command; its reply never comes
          }
          out.write(message);
          out.flush();
        }
      } catch (IOException e) {
        // a socket closed: end the link
      }
      cut();
    }

    /** Closes both sockets, resetting the client's; idempotent. */
    void cut() {
      links.remove(this);
      reset(client);
      close(upstream);
    }
  }

  /** Reads one whole message, or null at the end of the stream before a message. */
  private static byte @Nullable [] readMessage(DataInputStream in) throws IOException {
    byte[] header = new byte[16];
    int first = in.read(header, 0, 1);
    if (first < 0) {
      return null;
    }
    in.readFully(header, 1, 15);
    int length = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getInt(0);
    if (length < 16 || length > MAX_MESSAGE) {
      throw new IOException("Not a MongoDB message: length " + length);
    }
    byte[] message = new byte[length];
    System.arraycopy(header, 0, message, 0, 16);
    in.readFully(message, 16, length - 16);
    return message;
  }

  /**
   * The name of the command a client message carries: the first key of an OP_MSG's body (its
   * kind-0 section) or of an OP_QUERY's query; {@code "OP_COMPRESSED"} or {@code "opCode N"}
   * for messages it cannot name.
   */
  static String commandName(ByteBuffer b) {
    int length = b.getInt(0);
    int opCode = b.getInt(12);
    try {
      if (opCode == OP_MSG) {
        int flags = b.getInt(16);
        int end = length - ((flags & CHECKSUM_PRESENT) != 0 ? 4 : 0);
        int at = 20;
        while (at < end) {
          byte kind = b.get(at++);
          int size = b.getInt(at);
          if (kind == 0) {
            return firstKey(b, at);
          }
          at += size; // kind 1: the size covers itself, the identifier and the documents
        }
        return "OP_MSG without a body";
      }
      if (opCode == OP_QUERY) {
        int at = cstringEnd(b, 20) + 1 + 8; // flags, collection name, skip and return counts
        return firstKey(b, at);
      }
    } catch (IndexOutOfBoundsException e) {
      return "malformed opCode " + opCode;
    }
    return opCode == OP_COMPRESSED ? "OP_COMPRESSED" : opCode == OP_REPLY ? "OP_REPLY"
        : "opCode " + opCode;
  }

  /** The first key of the BSON document at {@code at}, or "" for an empty document. */
  private static String firstKey(ByteBuffer b, int at) {
    int type = b.get(at + 4);
    if (type == 0) {
      return "";
    }
    int nameAt = at + 5;
    return new String(b.array(), nameAt, cstringEnd(b, nameAt) - nameAt, StandardCharsets.UTF_8);
  }

  private static int cstringEnd(ByteBuffer b, int at) {
    int i = at;
    while (b.get(i) != 0) {
      i++;
    }
    return i;
  }

  private static void reset(Socket s) {
    try {
      s.setSoLinger(true, 0);
    } catch (IOException ignored) {
      // already closed
    }
    close(s);
  }

  private static void close(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }
}
