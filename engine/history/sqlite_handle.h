#pragma once
// A thin RAII layer over the sqlite3 C API: the history needs only prepared statements (bound once per row, reset
// between uses) and transactions that roll back unless committed. Kept tiny on purpose; sqlite3.h stays out of the
// public headers (the engine links SQLite privately).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace kiln {

// An SQLite failure while reading or writing an already opened history (disk full, locked for too long, a bad
// query). Opening refuses files with LoadError instead.
class HistoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SqlStatement {
 public:
  SqlStatement() = default;
  SqlStatement(sqlite3* db, std::string_view sql);  // throws HistoryError when the SQL does not compile
  ~SqlStatement();
  SqlStatement(SqlStatement&& o) noexcept;
  SqlStatement& operator=(SqlStatement&& o) noexcept;
  SqlStatement(const SqlStatement&) = delete;
  SqlStatement& operator=(const SqlStatement&) = delete;

  // Parameters are 1-based as in SQLite. Binding after a step resets the statement first, so one prepared
  // statement is simply re-bound for every row.
  SqlStatement& bind(int index, int64_t v);
  SqlStatement& bind(int index, int v) { return bind(index, static_cast<int64_t>(v)); }
  SqlStatement& bind(int index, double v);
  SqlStatement& bind(int index, std::string_view text);
  SqlStatement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  SqlStatement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  // Binds text without copying it: it must stay unchanged until the statement is stepped and re-bound or reset.
  SqlStatement& bindView(int index, std::string_view text);
  // Absent values (and, for bindTextOrNull, empty text) are bound as NULL.
  SqlStatement& bind(int index, std::optional<int64_t> v);
  SqlStatement& bind(int index, const std::optional<double>& v);
  SqlStatement& bind(int index, const std::optional<std::string>& text);
  SqlStatement& bindTextOrNull(int index, const std::string& text);
  SqlStatement& bindNull(int index);

  // Advances: true when a row is available, false when done. Throws HistoryError on failure.
  bool step();
  // Runs a statement that returns no rows (or ignores them) and resets it.
  void run();
  void reset();

  bool isNull(int column) const;
  int64_t getInt(int column) const;
  double getDouble(int column) const;
  std::string getText(int column) const;  // "" for NULL
  std::optional<int64_t> getOptInt(int column) const;

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  bool stepped_ = false;
  void prepareForBind();
  [[noreturn]] void fail(const char* what) const;
};

// BEGIN IMMEDIATE takes the write lock up front (so two writers wait on busy_timeout instead of deadlocking on a
// lock upgrade); BEGIN (deferred) is a consistent read snapshot. Rolls back in the destructor unless committed.
class SqlTransaction {
 public:
  enum class Kind { Read, Write };
  SqlTransaction(sqlite3* db, Kind kind);
  ~SqlTransaction();
  SqlTransaction(const SqlTransaction&) = delete;
  SqlTransaction& operator=(const SqlTransaction&) = delete;
  void commit();

 private:
  sqlite3* db_;
  bool open_ = false;
};

// Process-wide SQLite settings, applied once before the first connection opens (HistoryDb calls it).
void configureSqlite();

// Runs SQL without results (schema, pragmas). Throws HistoryError with SQLite's message.
void sqlExec(sqlite3* db, std::string_view sql);

}  // namespace kiln
