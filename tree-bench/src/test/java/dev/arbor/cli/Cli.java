package dev.arbor.cli;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.arbor.mongo.MongoTestServer;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Runs {@link Arbor} in-process and captures its exit code, stdout and stderr. */
final class Cli {
  private Cli() {}

  /** The outcome of one run. */
  record Result(int exit, byte[] stdout, String stderr) {
    String out() {
      return new String(stdout, UTF_8);
    }

    List<String> errLines() {
      return stderr.lines().toList();
    }

    @Override
    public String toString() {
      return "exit " + exit + "\n--- stdout\n" + out() + "--- stderr\n" + stderr;
    }
  }

  static Result run(String... args) {
    return runWithStdin(new byte[0], args);
  }

  /** Runs {@code arbor args} whose {@code import} sees {@code capacity} as this machine's. */
  static Result run(Capacity capacity, String... args) {
    return run(new byte[0], capacity, args);
  }

  static Result runWithStdin(byte[] stdin, String... args) {
    return run(stdin, Capacity.ofThisMachine(), args);
  }

  private static Result run(byte[] stdin, Capacity capacity, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit = Arbor.commandLine(new ByteArrayInputStream(stdin), out, err, capacity)
        .execute(args);
    return new Result(exit, out.toByteArray(), err.toString(UTF_8));
  }

  /** {@code args} followed by the options that reach the test server and its database. */
  static String[] onServer(String... args) {
    MongoTestServer server = MongoTestServer.get();
    List<String> all = new ArrayList<>(Arrays.asList(args));
    all.addAll(List.of("--uri", server.uri(), "--db", server.database().getName()));
    return all.toArray(String[]::new);
  }
}
