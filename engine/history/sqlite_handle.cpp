#include "history/sqlite_handle.h"

#include <sqlite3.h>

#include <mutex>

namespace kiln {

SqlStatement::SqlStatement(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) !=
      SQLITE_OK)
    throw HistoryError(std::string("SQL error: ") + sqlite3_errmsg(db) + " in: " + std::string(sql.substr(0, 80)));
}

SqlStatement::~SqlStatement() { sqlite3_finalize(stmt_); }

SqlStatement::SqlStatement(SqlStatement&& o) noexcept : db_(o.db_), stmt_(o.stmt_), stepped_(o.stepped_) {
  o.stmt_ = nullptr;
}

SqlStatement& SqlStatement::operator=(SqlStatement&& o) noexcept {
  if (this != &o) {
    sqlite3_finalize(stmt_);
    db_ = o.db_;
    stmt_ = o.stmt_;
    stepped_ = o.stepped_;
    o.stmt_ = nullptr;
  }
  return *this;
}

void SqlStatement::fail(const char* what) const {
  throw HistoryError(std::string(what) + ": " + sqlite3_errmsg(db_));
}

void SqlStatement::prepareForBind() {
  if (stepped_) reset();
}

void SqlStatement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  stepped_ = false;
}

SqlStatement& SqlStatement::bind(int index, int64_t v) {
  prepareForBind();
  if (sqlite3_bind_int64(stmt_, index, v) != SQLITE_OK) fail("bind");
  return *this;
}

SqlStatement& SqlStatement::bind(int index, double v) {
  prepareForBind();
  if (sqlite3_bind_double(stmt_, index, v) != SQLITE_OK) fail("bind");
  return *this;
}

SqlStatement& SqlStatement::bind(int index, std::string_view text) {
  prepareForBind();
  // SQLITE_TRANSIENT: SQLite copies the text, so callers may pass temporaries.
  if (sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK)
    fail("bind");
  return *this;
}

SqlStatement& SqlStatement::bindView(int index, std::string_view text) {
  prepareForBind();
  if (sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8) != SQLITE_OK)
    fail("bind");
  return *this;
}

SqlStatement& SqlStatement::bind(int index, std::optional<int64_t> v) {
  return v ? bind(index, *v) : bindNull(index);
}

SqlStatement& SqlStatement::bind(int index, const std::optional<double>& v) {
  return v ? bind(index, *v) : bindNull(index);
}

SqlStatement& SqlStatement::bind(int index, const std::optional<std::string>& text) {
  return text ? bind(index, std::string_view(*text)) : bindNull(index);
}

SqlStatement& SqlStatement::bindTextOrNull(int index, const std::string& text) {
  return text.empty() ? bindNull(index) : bind(index, std::string_view(text));
}

SqlStatement& SqlStatement::bindNull(int index) {
  prepareForBind();
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) fail("bind");
  return *this;
}

bool SqlStatement::step() {
  stepped_ = true;
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // Reset returns the statement to a usable state; the error message is read first.
  const std::string msg = sqlite3_errmsg(db_);
  sqlite3_reset(stmt_);
  throw HistoryError("SQLite: " + msg);
}

void SqlStatement::run() {
  while (step()) {
  }
  reset();
}

bool SqlStatement::isNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
int64_t SqlStatement::getInt(int column) const { return sqlite3_column_int64(stmt_, column); }
double SqlStatement::getDouble(int column) const { return sqlite3_column_double(stmt_, column); }

std::string SqlStatement::getText(int column) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (!p) return {};
  return std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<int64_t> SqlStatement::getOptInt(int column) const {
  if (isNull(column)) return std::nullopt;
  return getInt(column);
}

void sqlExec(sqlite3* db, std::string_view sql) {
  char* err = nullptr;
  const std::string text(sql);
  if (sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    throw HistoryError("SQLite: " + msg);
  }
}

SqlTransaction::SqlTransaction(sqlite3* db, Kind kind) : db_(db) {
  // A read inside a transaction the caller already holds is consistent as it is; SQLite cannot nest BEGIN.
  if (kind == Kind::Read && !sqlite3_get_autocommit(db_)) return;
  sqlExec(db_, kind == Kind::Write ? "BEGIN IMMEDIATE" : "BEGIN");
  open_ = true;
}

SqlTransaction::~SqlTransaction() {
  if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void SqlTransaction::commit() {
  if (!open_) return;
  sqlExec(db_, "COMMIT");
  open_ = false;
}

void configureSqlite() {
  static std::once_flag once;
  std::call_once(once, [] {
    // SQLite counts every allocation under one global mutex by default, for sqlite3_memory_used(), which Kiln never
    // asks: the history writer's thread paid it on each of its tens of thousands of row allocations per run.
    // Refused (harmlessly) when something in the process already started SQLite.
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  });
}

}  // namespace kiln
