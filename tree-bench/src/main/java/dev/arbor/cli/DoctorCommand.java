package dev.arbor.cli;

import dev.arbor.mongo.Doctor;
import dev.arbor.tools.Text;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * {@code arbor doctor}: runs {@link Doctor} against a server and prints one line per capability.
 */
@Command(name = "doctor", mixinStandardHelpOptions = true,
    description = {
        "Check Arbor against a server: every operation of the contract in every pattern, compared"
            + " with the in-memory reference after each, through every protocol the server offers"
            + " (lock and journal, transactions, the caller's session), the server features the"
            + " stores use ($graphLookup, pipeline updates, collation, regexes, large $in), a"
            + " short run of concurrent writers and the recovery of a change interrupted"
            + " half-way.",
        "Works in one scratch collection arbor_doctor_<random> of --database, dropped at the"
            + " end; touches no other collection. Prints the server's version and topology, then"
            + " one line per capability: used or not offered, passed or FAILED with the reason.",
        "Exit code 0 when everything used passed (what the server does not offer is not a"
            + " failure), " + Arbor.EXIT_PROBLEMS + " when something FAILED."})
final class DoctorCommand extends ArborCommand {
  static final String DEFAULT_DATABASE = "arbor_doctor";

  @Option(names = "--uri", paramLabel = "URI",
      description = {"MongoDB connection string of the server to check, for example",
          "  mongodb://localhost:27017/?replicaSet=rs0",
          "Default: a temporary embedded server (mongo-java-server), to show what it lacks."})
  String uri;

  @Option(names = {"--database", "--db"}, paramLabel = "NAME", defaultValue = DEFAULT_DATABASE,
      description = "Database of the scratch collection. Default: ${DEFAULT-VALUE}.")
  String database;

  @Override
  public Integer call() {
    String problem = MongoNames.databaseProblem(database);
    if (problem != null) {
      throw new ParameterException(spec.commandLine(), "invalid --database '"
          + Text.oneLine(database) + "': " + problem);
    }
    try (Progress progress = progress();
        Connection connection = Connection.open(spec, "--uri", uri, null)) {
      if (connection.temporary()) {
        progress.note("no --uri: checking a temporary embedded server (mongo-java-server)");
      }
      Doctor.Report report = Doctor.run(connection.settings(), database, progress::phase);
      for (String line : report.lines()) {
        out().println(line);
      }
      out().flush();
      return report.passed() ? Arbor.EXIT_OK : Arbor.EXIT_PROBLEMS;
    }
  }
}
