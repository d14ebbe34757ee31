#include "history/history_db.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <vector>

#include "history/pass_rows.h"
#include "util/load_error.h"

namespace kiln {

namespace {

// ---------------------------------------------------------------- schema

// The current schema, what a blank file is created with (in one step: creating a new history is on the recorded
// run's timed path). Existing files at an older version are brought here by kMigrations instead.
//
// Graph rows are versioned: a row is valid over passes [first_pass, last_pass), where last_pass is the pass whose
// pass_rows ended list names the row (none = still valid), so the graph after pass k is the rows with first_pass
// <= k not ended by k, and what pass k changed is the rows pass_rows lists for k. Rows of a run are clustered by
// their primary key (WITHOUT ROWID: no separate rowid b-tree, so the key is stored once); "valid at k" reads the
// run's key range.
//
// What each pass started and ended is listed in pass_rows (version 6, pass_rows.h), whose keys are looked up by
// the primary keys: the graph tables carry no other index, so a row written costs one b-tree insert. Since version
// 7 a row is never written twice: its end is in the ended list only (the views node_ends, value_ends and
// edge_ends show it as a last_pass column).
//
// `values` is an SQL keyword: queries quote it as "values".
constexpr const char* kSchemaCurrent = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;

CREATE TABLE models(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL,
  name TEXT NOT NULL,
  size_bytes INTEGER,
  added_at TEXT NOT NULL);
CREATE INDEX models_by_path ON models(path, size_bytes);

CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  model_id INTEGER NOT NULL REFERENCES models(id),
  options_json TEXT NOT NULL,
  kiln_version TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL CHECK(status IN ('running', 'ok', 'failed', 'stopped', 'incomplete')),
  error TEXT,
  total_ms REAL,
  nodes_before INTEGER,
  nodes_after INTEGER,
  writer_pid INTEGER,
  writer_host TEXT,
  shape_binding TEXT);
CREATE INDEX runs_by_status ON runs(status);

CREATE TABLE passes(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  stage TEXT NOT NULL,
  name TEXT NOT NULL,
  ms REAL NOT NULL,
  changed INTEGER NOT NULL,
  counters_json TEXT NOT NULL,
  nodes_before INTEGER,
  nodes_after INTEGER,
  error TEXT,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;

CREATE TABLE nodes(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  node_id INTEGER NOT NULL,
  first_pass INTEGER NOT NULL,
  graph_owner INTEGER NOT NULL,
  graph_attr TEXT NOT NULL,
  op_type TEXT NOT NULL,
  domain TEXT NOT NULL,
  name TEXT NOT NULL,
  attrs_json TEXT NOT NULL,
  annotations_json TEXT NOT NULL,
  PRIMARY KEY(run_id, node_id, first_pass)) WITHOUT ROWID;

CREATE TABLE "values"(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  value_id INTEGER NOT NULL,
  first_pass INTEGER NOT NULL,
  graph_owner INTEGER NOT NULL,
  graph_attr TEXT NOT NULL,
  name TEXT NOT NULL,
  dtype TEXT NOT NULL,
  shape TEXT,
  format TEXT NOT NULL,
  bytes INTEGER,
  producer_node INTEGER,
  producer_index INTEGER,
  is_input INTEGER NOT NULL,
  is_output INTEGER NOT NULL,
  is_constant INTEGER NOT NULL,
  PRIMARY KEY(run_id, value_id, first_pass)) WITHOUT ROWID;

CREATE TABLE edges(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  consumer_node INTEGER NOT NULL,
  consumer_index INTEGER NOT NULL,
  first_pass INTEGER NOT NULL,
  value_id INTEGER NOT NULL,
  PRIMARY KEY(run_id, consumer_node, consumer_index, first_pass)) WITHOUT ROWID;
)sql";

// Annotation-only changes, one row per pass (version 5; annotation_changes.h has the format), and the same as one
// row per node and key for people who query the file: what pass `seq` changed in annotation `key` of `node_id`.
constexpr const char* kAnnotationChanges = R"sql(
CREATE TABLE annotation_changes(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  nodes INTEGER NOT NULL,
  changes_json TEXT NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
CREATE VIEW node_annotation_changes(run_id, seq, node_id, key, old_value, new_value) AS
  SELECT c.run_id, c.seq, CAST(n.key AS INTEGER), k.key, json_extract(k.value, '$[0]'), json_extract(k.value, '$[1]')
  FROM annotation_changes c, json_each(c.changes_json) n, json_each(n.value) k;
)sql";

// What each pass started and ended (version 6; pass_rows.h has the format).
constexpr const char* kPassRows = R"sql(
CREATE TABLE pass_rows(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  graph_table TEXT NOT NULL,
  started TEXT NOT NULL,
  ended TEXT NOT NULL,
  PRIMARY KEY(run_id, seq, graph_table)) WITHOUT ROWID;
)sql";

// What the emulator records (version 3): per-pass numerical error (kiln verify) and the simulated timeline. Part of
// the current schema, and what migrateTo3 adds to older files.
constexpr const char* kEmulationTables = R"sql(
CREATE TABLE pass_accuracy(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  status TEXT NOT NULL CHECK(status IN ('ok', 'exceeds', 'not_emulatable', 'error')),
  max_abs REAL,
  max_rel REAL,
  cosine REAL,
  detail TEXT,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;

CREATE TABLE timeline(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  task INTEGER NOT NULL,
  type TEXT NOT NULL,
  node_id INTEGER,
  stream INTEGER NOT NULL,
  event INTEGER,
  unit TEXT NOT NULL,
  cores INTEGER NOT NULL,
  start_us REAL NOT NULL,
  end_us REAL NOT NULL,
  flops REAL NOT NULL,
  bytes REAL NOT NULL,
  memory_bound INTEGER NOT NULL,
  critical INTEGER NOT NULL,
  PRIMARY KEY(run_id, task)) WITHOUT ROWID;
)sql";

// A run measured on an NPU (msprof's op_summary, torch_npu's ASCEND_PROFILER_OUTPUT), imported beside a run or as
// one of its own: the profile's source, its device tasks (each matched to a node of the run's last graph where one
// could be) and the static memory GE reported per op. Times are microseconds from the profile's first task.
constexpr const char* kMeasuredTables = R"sql(
CREATE TABLE measured_profiles(
  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  source TEXT NOT NULL,
  tasks_file TEXT NOT NULL,
  imported_at TEXT NOT NULL,
  skipped_rows INTEGER NOT NULL,
  static_total_bytes INTEGER);

CREATE TABLE measured_tasks(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  task INTEGER NOT NULL,
  name TEXT NOT NULL,
  op_type TEXT NOT NULL,
  task_type TEXT NOT NULL,
  stream INTEGER NOT NULL,
  start_us REAL NOT NULL,
  duration_us REAL NOT NULL,
  wait_us REAL,
  block_dim INTEGER,
  input_shapes TEXT NOT NULL,
  input_types TEXT NOT NULL,
  output_shapes TEXT NOT NULL,
  output_types TEXT NOT NULL,
  node_id INTEGER,
  matched_by TEXT NOT NULL,
  PRIMARY KEY(run_id, task)) WITHOUT ROWID;

CREATE TABLE measured_static_memory(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  op_name TEXT NOT NULL,
  graph TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  node_start INTEGER NOT NULL,
  node_end INTEGER NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
)sql";

void createCurrent(sqlite3* db) {
  sqlExec(db, kSchemaCurrent);
  sqlExec(db, kEmulationTables);
  sqlExec(db, kMeasuredTables);
  sqlExec(db, kAnnotationChanges);
  sqlExec(db, kPassRows);
  sqlExec(db, pass_rows::endsViews());
  sqlExec(db, "INSERT INTO meta(key, value) VALUES ('application', 'kiln')");
}

// Version 1 had full (run_id, first_pass) and (run_id, last_pass) indexes on the three graph tables.
void migrateTo2(sqlite3* db) {
  sqlExec(db, R"sql(
DROP INDEX nodes_by_first; DROP INDEX nodes_by_last;
DROP INDEX values_by_first; DROP INDEX values_by_last;
DROP INDEX edges_by_first; DROP INDEX edges_by_last;
CREATE INDEX nodes_started ON nodes(run_id, first_pass) WHERE first_pass > 0;
CREATE INDEX nodes_ended ON nodes(run_id, last_pass) WHERE last_pass IS NOT NULL;
CREATE INDEX values_started ON "values"(run_id, first_pass) WHERE first_pass > 0;
CREATE INDEX values_ended ON "values"(run_id, last_pass) WHERE last_pass IS NOT NULL;
CREATE INDEX edges_started ON edges(run_id, first_pass) WHERE first_pass > 0;
CREATE INDEX edges_ended ON edges(run_id, last_pass) WHERE last_pass IS NOT NULL;
)sql");
}

// kMigrations[v - 1] brings a file from schema version v to v + 1 (a blank file, version 0, is created at the
// current version by createCurrent). A schema change edits kSchemaCurrent and appends a function here; files are
// upgraded step by step inside one transaction on their first writable open.
// Version 3 adds the emulator's tables.
void migrateTo3(sqlite3* db) { sqlExec(db, kEmulationTables); }
// Version 4 records the shape binding a run compiled at (ShapeBinding::toJson; NULL for earlier runs).
void migrateTo4(sqlite3* db) { sqlExec(db, "ALTER TABLE runs ADD COLUMN shape_binding TEXT"); }
// Version 5 keeps annotation-only changes out of the node rows (older runs simply have none).
void migrateTo5(sqlite3* db) { sqlExec(db, kAnnotationChanges); }
// Version 6 lists what each pass started and ended in pass_rows instead of indexing the graph tables.
void migrateTo6(sqlite3* db) {
  sqlExec(db, R"sql(
DROP INDEX nodes_started; DROP INDEX nodes_ended;
DROP INDEX values_started; DROP INDEX values_ended;
DROP INDEX edges_started; DROP INDEX edges_ended;
)sql");
  sqlExec(db, kPassRows);
  pass_rows::rebuild(db);
}
// Version 7 keeps a row's end in pass_rows alone (a close no longer rewrites the row): last_pass goes, the views
// show it. DROP COLUMN rewrites each table once.
void migrateTo7(sqlite3* db) {
  sqlExec(db, R"sql(
ALTER TABLE nodes DROP COLUMN last_pass;
ALTER TABLE "values" DROP COLUMN last_pass;
ALTER TABLE edges DROP COLUMN last_pass;
)sql");
  sqlExec(db, pass_rows::endsViews());
}

// Version 8 adds measured runs (msprof profiles).
void migrateTo8(sqlite3* db) { sqlExec(db, kMeasuredTables); }

using Migration = void (*)(sqlite3*);
constexpr std::array<Migration, HistoryDb::kSchemaVersion - 1> kMigrations = {&migrateTo2, &migrateTo3, &migrateTo4,
                                                                         &migrateTo5, &migrateTo6, &migrateTo7,
                                                                         &migrateTo8};

// ---------------------------------------------------------------- validation

// Facts read from an existing file through a read-only connection.
struct FileFacts {
  int userVersion = 0;
  int tables = 0;  // user tables (not sqlite_*)
  bool kilnMeta = false;
};

std::string errorOf(sqlite3* db) { return db ? sqlite3_errmsg(db) : "out of memory"; }

// Turns an SQLite error code met while inspecting a file into the one-line reason we refuse it with.
[[noreturn]] void refuse(const std::string& path, int code, sqlite3* db) {
  const int primary = code & 0xff;
  if (primary == SQLITE_NOTADB) throw LoadError(path, "corrupt database (bad header)");
  if (primary == SQLITE_CORRUPT) throw LoadError(path, "corrupt database: " + errorOf(db));
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) throw LoadError(path, "database is locked by another process");
  if (primary == SQLITE_CANTOPEN || primary == SQLITE_PERM || primary == SQLITE_READONLY)
    throw LoadError(path, "cannot open: " + errorOf(db));
  throw LoadError(path, "cannot read history: " + errorOf(db));
}

struct Connection {
  sqlite3* db = nullptr;
  ~Connection() { sqlite3_close_v2(db); }
};

// Runs a query returning one row per result, collecting the first column as text; refuses the file on error.
std::vector<std::string> queryColumn(const std::string& path, sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(st);
    refuse(path, rc, db);
  }
  std::vector<std::string> out;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    out.emplace_back(t ? t : "");
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) refuse(path, rc, db);
  return out;
}

// A file name as an SQLite URI ("file:/a%20b.db"): everything but unreserved characters percent-encoded.
std::string fileUri(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string uri = "file:";
  for (unsigned char ch : path) {
    if (std::isalnum(ch) || ch == '/' || ch == '.' || ch == '_' || ch == '-' || ch == '~') {
      uri += static_cast<char>(ch);
    } else {
      uri += '%';
      uri += hex[ch >> 4];
      uri += hex[ch & 15];
    }
  }
  return uri;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

FileFacts inspectExisting(const std::string& path, bool inUse, HistoryDb::Check check) {
  const std::string name = inUse ? path : fileUri(path) + "?immutable=1";
  Connection c;
  configureSqlite();
  int rc = sqlite3_open_v2(name.c_str(), &c.db, SQLITE_OPEN_READONLY | (inUse ? 0 : SQLITE_OPEN_URI), nullptr);
  if (rc != SQLITE_OK) refuse(path, rc, c.db);
  sqlite3_busy_timeout(c.db, 5000);
  // quick_check reads every page (not the index/table cross-checks of integrity_check): corrupt files are refused
  // up front instead of failing halfway through a view. It costs time in proportion to the file, so a history that
  // grew past kFullCheckBytes (months of runs) gets only the structural checks below on each open: SQLite meets
  // a corrupt page later with SQLITE_CORRUPT, which reaches the user as a HistoryError naming the file, never as
  // a crash, and recording into it stops without breaking the compile. An open for appending runs skips it on a
  // file without free pages (HistoryDb::Check says why).
  constexpr off_t kFullCheckBytes = off_t{8} << 20;
  struct stat st {};
  const bool whole = check == HistoryDb::Check::Whole ||
                     std::stoll(queryColumn(path, c.db, "PRAGMA freelist_count").at(0)) != 0;
  if (whole && (::stat(path.c_str(), &st) != 0 || st.st_size <= kFullCheckBytes)) {
    const auto verdict = queryColumn(path, c.db, "PRAGMA quick_check(1)");
    if (verdict.empty() || verdict.front() != "ok")
      throw LoadError(path, "corrupt database: " +
                                (verdict.empty() ? std::string("quick_check failed") : verdict.front()));
  }
  FileFacts f;
  f.userVersion = std::stoi(queryColumn(path, c.db, "PRAGMA user_version").at(0));
  f.tables = std::stoi(queryColumn(path, c.db,
                                   "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE "
                                   "'sqlite\\_%' ESCAPE '\\'")
                           .at(0));
  const auto hasMeta = queryColumn(path, c.db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta'");
  if (!hasMeta.empty())
    f.kilnMeta = !queryColumn(path, c.db, "SELECT 1 FROM meta WHERE key = 'application' AND value = 'kiln'").empty();
  return f;
}

FileFacts inspectExisting(const std::string& path, HistoryDb::Check check) {
  // A WAL-mode file opened read-only leaves -wal/-shm files behind. For a file that no one has open (no -wal or
  // -journal next to it) the check reads it as immutable instead, so refusing a file leaves its directory exactly as
  // it was; a file in use is read the normal way (its side files exist already).
  auto inUse = [&] { return exists(path + "-wal") || exists(path + "-journal"); };
  if (inUse()) return inspectExisting(path, true, check);
  try {
    return inspectExisting(path, false, check);
  } catch (const LoadError&) {
    // A writer opened the file while it was read as immutable: what was read may be half of its changes. Read it
    // again the normal way; only what that read finds is the file's.
    if (!inUse()) throw;
    return inspectExisting(path, true, check);
  }
}

// The first 16 bytes of every SQLite 3 database.
bool hasSqliteHeader(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[16] = {};
  in.read(head, sizeof head);
  return in.gcount() == static_cast<std::streamsize>(sizeof head) && std::memcmp(head, "SQLite format 3", 16) == 0;
}

// Refuses what we must not touch; returns true when the file is a blank to initialise (missing, 0 bytes, or an
// SQLite database without any table).
bool validate(const std::string& path, HistoryDb::Mode mode, HistoryDb::Check check) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) throw LoadError(path, std::string("cannot open: ") + std::strerror(errno));
    if (mode == HistoryDb::Mode::ReadOnly) throw LoadError(path, "no such file");
    return true;
  }
  if (S_ISDIR(st.st_mode)) throw LoadError(path, "is a directory, not a history database");
  if (st.st_size == 0) {
    if (mode == HistoryDb::Mode::ReadOnly) throw LoadError(path, "empty file, not a Kiln history");
    return true;
  }
  // Checked by hand first: SQLite would only notice lazily, and its message ("file is not a database") is vague.
  if (!hasSqliteHeader(path)) throw LoadError(path, "not an SQLite database");
  const FileFacts f = inspectExisting(path, check);
  if (f.tables == 0) {
    if (mode == HistoryDb::Mode::ReadOnly) throw LoadError(path, "empty database, not a Kiln history");
    return true;
  }
  if (!f.kilnMeta) throw LoadError(path, "an SQLite database that is not a Kiln history");
  if (f.userVersion > HistoryDb::kSchemaVersion)
    throw LoadError(path, "schema version " + std::to_string(f.userVersion) + " is newer than this Kiln (" +
                              std::to_string(HistoryDb::kSchemaVersion) + ")");
  if (f.userVersion < 1) throw LoadError(path, "corrupt database: Kiln history without a schema version");
  if (f.userVersion < HistoryDb::kSchemaVersion && mode == HistoryDb::Mode::ReadOnly)
    throw LoadError(path, "schema version " + std::to_string(f.userVersion) +
                              " needs an upgrade: open it once for writing (kiln history upgrade)");
  return false;
}

std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

}  // namespace

// ---------------------------------------------------------------- HistoryDb

HistoryDb::HistoryDb(std::string path, Mode mode, Check check) : path_(std::move(path)), mode_(mode) {
  if (path_.empty()) throw LoadError(path_, "no history file given");
  const bool blank = validate(path_, mode_, check);
  openConnection(blank);
  if (mode_ == Mode::ReadWrite) {
    try {
      migrate(blank);
      abandonedMarked_ = markAbandonedRuns();
    } catch (const HistoryError& e) {
      sqlite3_close_v2(db_);
      db_ = nullptr;
      throw LoadError(path_, e.what());
    }
  }
}

HistoryDb::~HistoryDb() { sqlite3_close_v2(db_); }

int HistoryDb::olderSchemaOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0 || !hasSqliteHeader(path)) return 0;
  const FileFacts f = inspectExisting(path, Check::Whole);
  return f.kilnMeta && f.userVersion >= 1 && f.userVersion < kSchemaVersion ? f.userVersion : 0;
}

void HistoryDb::openConnection(bool blank) {
  // NOMUTEX: a HistoryDb is used by one thread at a time (each view or worker opens its own), so SQLite's
  // per-call connection mutex is pure overhead on the recorder's many small statements.
  const int flags = (mode_ == Mode::ReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                    SQLITE_OPEN_NOMUTEX;
  configureSqlite();
  const int rc = sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = errorOf(db_);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw LoadError(path_, "cannot open: " + msg);
  }
  sqlite3_extended_result_codes(db_, 1);
  // A viewer reading while a batch commits a pass (or two writers) wait instead of failing at once.
  sqlite3_busy_timeout(db_, 5000);
  try {
    if (mode_ == Mode::ReadWrite) {
      // WAL: readers never block the writer and see the last committed pass. synchronous=NORMAL keeps every
      // committed pass across a process crash (SIGKILL); only a power loss may drop the last few commits.
      //
      // Turning a blank file into a WAL database writes its first page through a rollback journal, which at the
      // default synchronous=FULL costs four fsyncs (journal, directory, journal, file) on every new history, more
      // than recording a small model's passes. A blank file holds nothing a power loss could take away (at worst
      // it is left unreadable and has to be deleted), so that one step runs unsynced.
      if (blank) sqlExec(db_, "PRAGMA synchronous = OFF");
      sqlExec(db_, "PRAGMA journal_mode = WAL");
      sqlExec(db_, "PRAGMA synchronous = NORMAL");
    } else {
      sqlExec(db_, "PRAGMA query_only = ON");
    }
    sqlExec(db_, "PRAGMA foreign_keys = ON");
  } catch (const HistoryError& e) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw LoadError(path_, e.what());
  }
}

void HistoryDb::migrate(bool blank) {
  auto userVersion = [this] {
    SqlStatement q(db_, "PRAGMA user_version");
    q.step();
    return static_cast<int>(q.getInt(0));
  };
  // The common case, an up-to-date history, takes no write lock: opening must not wait for a batch that is writing.
  if (!blank && userVersion() == kSchemaVersion) return;
  // Re-read under the write lock: another process may have initialised the file since validate().
  SqlTransaction tx(db_, SqlTransaction::Kind::Write);
  SqlStatement tables(db_, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'");
  tables.step();
  const bool empty = tables.getInt(0) == 0;
  tables.reset();
  // A blank file starts from version 0 whatever its user_version says; a Kiln file from its own version.
  int v = empty ? 0 : userVersion();
  if (!empty && v == 0) throw HistoryError("an SQLite database that is not a Kiln history");
  if (v > kSchemaVersion) throw HistoryError("schema version " + std::to_string(v) + " is newer than this Kiln");
  if (v == kSchemaVersion) return;  // initialised by another process meanwhile
  if (v == 0)
    createCurrent(db_);
  else
    for (; v < kSchemaVersion; ++v) kMigrations[static_cast<size_t>(v - 1)](db_);
  sqlExec(db_, "PRAGMA user_version = " + std::to_string(kSchemaVersion));
  tx.commit();
}

int HistoryDb::markAbandonedRuns() {
  // A run still 'running' whose writer process on this host is gone was killed (or crashed) mid-way: its committed
  // passes stay readable, the run is marked 'incomplete'. Runs written from other hosts cannot be checked; they
  // stay as they are.
  const std::string host = hostName();
  std::vector<int64_t> dead;
  {
    SqlStatement q(db_, "SELECT id, writer_pid, writer_host FROM runs WHERE status = 'running'");
    while (q.step()) {
      const int64_t pid = q.getInt(1);
      if (q.getText(2) != host || pid <= 0) continue;
      if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) dead.push_back(q.getInt(0));
    }
  }
  if (dead.empty()) return 0;
  SqlTransaction tx(db_, SqlTransaction::Kind::Write);
  SqlStatement mark(db_,
                    "UPDATE runs SET status = 'incomplete', error = coalesce(error, 'the writing process (pid ' || "
                    "writer_pid || ') ended before the run finished') WHERE id = ?1 AND status = 'running'");
  for (int64_t id : dead) mark.bind(1, id).run();
  tx.commit();
  return static_cast<int>(dead.size());
}

HistoryDb::HistoryDb(const HistoryDb& validated, AnotherReader)
    : path_(validated.path_), mode_(Mode::ReadOnly) {
  openConnection(false);
}

std::unique_ptr<HistoryDb> HistoryDb::anotherReader() const {
  return std::unique_ptr<HistoryDb>(new HistoryDb(*this, AnotherReader{}));
}

sqlite3* HistoryDb::openWriterConnection() const {
  if (mode_ != Mode::ReadWrite) throw HistoryError("the history database is open read-only");
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = errorOf(db);
    sqlite3_close_v2(db);
    throw HistoryError("cannot open " + path_ + " for writing: " + msg);
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, 5000);
  try {
    // journal_mode=WAL is a property of the file (set by the first open); these are per connection.
    sqlExec(db, "PRAGMA synchronous = NORMAL");
    // The writer inserts rows of a run it created itself: checking every row's run against `runs` would cost a
    // lookup per row for nothing (the main connection keeps foreign keys on for everything else).
    sqlExec(db, "PRAGMA foreign_keys = OFF");
    // A pass rewrites the same upper b-tree pages: a cache that holds them spares re-reading them (the default 2 MB
    // evicts them on a big graph), and checkpointing every 64 MB rather than every 4 MB of WAL spares copying the
    // same pages into the file again and again while a run writes.
    sqlExec(db, "PRAGMA cache_size = -65536");
    sqlExec(db, "PRAGMA wal_autocheckpoint = 16384");
  } catch (...) {
    sqlite3_close_v2(db);
    throw;
  }
  return db;
}

int64_t HistoryDb::lastInsertId() const { return sqlite3_last_insert_rowid(db_); }

void HistoryDb::checkpoint() {
  if (mode_ == Mode::ReadWrite) sqlExec(db_, "PRAGMA wal_checkpoint(TRUNCATE)");
}

std::string nowIso() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t secs = system_clock::to_time_t(now);
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[80];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

}  // namespace kiln
