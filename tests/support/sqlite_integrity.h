#pragma once
// PRAGMA integrity_check of a database file through a read-only connection of its own: "ok" when intact, else
// SQLite's findings ("cannot open" when it cannot be opened). For the tests that kill writers mid-transaction.
#include <sqlite3.h>

#include <QString>

inline QString sqliteIntegrity(const QString& db) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.toUtf8().constData(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(h);
    return "cannot open";
  }
  QString result;
  sqlite3_exec(
      h, "PRAGMA integrity_check",
      [](void* out, int, char** values, char**) {
        *static_cast<QString*>(out) += QString::fromUtf8(values[0] ? values[0] : "");
        return 0;
      },
      &result, nullptr);
  sqlite3_close(h);
  return result;
}
