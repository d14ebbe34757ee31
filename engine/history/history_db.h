#pragma once
// The history database file: opening, identifying, versioning. A Kiln history is an SQLite file in WAL mode (a GUI
// reads while a batch writes) whose `meta` table says application = kiln and whose `PRAGMA user_version` is the
// schema version. Opening never modifies a file it refuses: it is validated through a read-only connection first.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "history/sqlite_handle.h"

namespace kiln {

// One HistoryDb serves one thread at a time; a view and a background writer each open their own.
class HistoryDb {
 public:
  enum class Mode { ReadWrite, ReadOnly };
  // How much of an existing file is checked before it is used. Whole: every page (PRAGMA quick_check, on files up
  // to 8 MB), so a damaged file is refused before a view fails half-way. ForAppending, for opens that only add runs
  // (recording a compile, a run, a batch): the header, schema and version, plus the whole check when the file has
  // free pages. quick_check costs ~1.5 ms per MB, and a history grows by a run per compile: checked whole, every
  // recorded compile into a project's history paid up to 12 ms for it. An append needs less: with an empty
  // freelist SQLite takes every new page from the end of the file, so a damaged page cannot be handed out again
  // and overwritten, and a damaged page on an append's path is met as SQLITE_CORRUPT, which stops the recording
  // with the file named and leaves the compile alone.
  enum class Check { Whole, ForAppending };
  // Schema version this build writes; older files are migrated on a writable open, newer ones refused.
  static constexpr int kSchemaVersion = 8;

  // ReadWrite creates a missing or empty file and marks runs abandoned by dead writers 'incomplete'. ReadOnly
  // (viewers) never writes. Throws LoadError(path, reason) for: not an SQLite file, an SQLite database that is not
  // Kiln's, a newer schema, a corrupt file (see Check), or (ReadOnly) a missing/empty file.
  explicit HistoryDb(std::string path, Mode mode = Mode::ReadWrite, Check check = Check::Whole);
  // A writable open for recording runs (Check::ForAppending): `kiln compile/run/verify/batch --history`, the
  // workbench's and the Python module's compiles.
  static std::unique_ptr<HistoryDb> forAppending(std::string path) {
    return std::make_unique<HistoryDb>(std::move(path), Mode::ReadWrite, Check::ForAppending);
  }
  // The schema version of `path` when it is a Kiln history older than this build's (which a ReadOnly open refuses
  // until a ReadWrite open has migrated it), else 0. Throws LoadError for a file that cannot be read (corrupt...).
  static int olderSchemaOf(const std::string& path);
  ~HistoryDb();
  HistoryDb(const HistoryDb&) = delete;
  HistoryDb& operator=(const HistoryDb&) = delete;

  const std::string& path() const { return path_; }
  bool readOnly() const { return mode_ == Mode::ReadOnly; }
  // How many runs left 'running' by a dead process this open marked 'incomplete' (0 for ReadOnly).
  int abandonedRunsMarked() const { return abandonedMarked_; }

  sqlite3* handle() const { return db_; }
  SqlStatement prepare(std::string_view sql) const { return SqlStatement(db_, sql); }
  void exec(std::string_view sql) const { sqlExec(db_, sql); }
  int64_t lastInsertId() const;  // rowid of this connection's last INSERT
  // Copies the WAL into the main file (e.g. before measuring or copying the file). No-op when read-only.
  void checkpoint();
  // A further read-write connection to this (validated, migrated) file, with the same settings, for a writer on
  // another thread (history/history_writer.h). The caller closes it with sqlite3_close_v2. Throws HistoryError.
  sqlite3* openWriterConnection() const;
  // A further read-only connection to this file, already validated (and migrated), for a reader on another thread.
  std::unique_ptr<HistoryDb> anotherReader() const;

 private:
  std::string path_;
  Mode mode_;
  sqlite3* db_ = nullptr;
  int abandonedMarked_ = 0;

  struct AnotherReader {};
  HistoryDb(const HistoryDb& validated, AnotherReader);
  void openConnection(bool blank);
  void migrate(bool blank);
  int markAbandonedRuns();
};

// Now as the history writes times: ISO 8601 UTC with milliseconds (sorts as text, reads in the sqlite3 shell).
std::string nowIso();

}  // namespace kiln
