#include "history/history_merge.h"

#include <filesystem>
#include <map>
#include <set>

#include "history/history_db.h"
#include "util/load_error.h"

namespace kiln {

namespace {

std::vector<std::string> columnsOf(const HistoryDb& db, const std::string& schema, const std::string& table) {
  std::vector<std::string> cols;
  SqlStatement st = db.prepare("SELECT name FROM pragma_table_info(?1, ?2)");
  st.bind(1, table).bind(2, schema);
  while (st.step()) cols.push_back(st.getText(0));
  return cols;
}

// Copies the rows of one run from src.<table> to main.<table> under a new run id; only the columns both files have
// (an input written by an older schema lacks what later migrations added, and those columns are nullable).
void copyRunRows(const HistoryDb& db, const std::string& table, int64_t from, int64_t to) {
  const std::vector<std::string> srcCols = columnsOf(db, "src", table);
  if (srcCols.empty()) return;  // an older input without this table
  const std::set<std::string> have(srcCols.begin(), srcCols.end());
  std::string cols, select;
  for (const std::string& c : columnsOf(db, "main", table)) {
    if (c != "run_id" && !have.count(c)) continue;
    cols += (cols.empty() ? "" : ", ") + ("\"" + c + "\"");
    select += (select.empty() ? "" : ", ") + (c == "run_id" ? std::string("?1") : "\"" + c + "\"");
  }
  SqlStatement st = db.prepare("INSERT INTO main.\"" + table + "\"(" + cols + ") SELECT " + select + " FROM src.\"" +
                               table + "\" WHERE run_id = ?2");
  st.bind(1, to).bind(2, from).run();
}

int64_t modelIdIn(const HistoryDb& db, int64_t srcModel, HistoryMergeStats& stats) {
  SqlStatement get = db.prepare("SELECT path, name, size_bytes, added_at FROM src.models WHERE id = ?1");
  get.bind(1, srcModel);
  if (!get.step()) throw HistoryError("run refers to a missing model row " + std::to_string(srcModel));
  const std::string path = get.getText(0), name = get.getText(1), added = get.getText(3);
  const std::optional<int64_t> size = get.getOptInt(2);
  SqlStatement find = db.prepare("SELECT id FROM main.models WHERE path = ?1 AND size_bytes IS ?2");
  find.bind(1, path).bind(2, size);
  if (find.step()) return find.getInt(0);
  SqlStatement add = db.prepare("INSERT INTO main.models(path, name, size_bytes, added_at) VALUES(?1, ?2, ?3, ?4)");
  add.bind(1, path).bind(2, name).bind(3, size).bind(4, added).run();
  ++stats.models;
  return db.lastInsertId();
}

}  // namespace

HistoryMergeStats mergeHistories(const std::string& out, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (fs::equivalent(in, out, ec)) throw LoadError(in, "is the output file itself");
    HistoryDb check(in, HistoryDb::Mode::ReadOnly);  // refuses foreign, newer and corrupt files unmodified
  }
  HistoryDb db(out);
  HistoryMergeStats stats;
  const std::vector<std::string> runCols = [&] {
    std::vector<std::string> c;
    for (const std::string& col : columnsOf(db, "main", "runs"))
      if (col != "id" && col != "model_id") c.push_back(col);
    return c;
  }();
  for (const std::string& in : inputs) {
    SqlStatement attach = db.prepare("ATTACH DATABASE ?1 AS src");
    attach.bind(1, in).run();
    try {
      SqlTransaction tx(db.handle(), SqlTransaction::Kind::Write);
      const std::vector<std::string> srcRunCols = columnsOf(db, "src", "runs");
      const std::set<std::string> have(srcRunCols.begin(), srcRunCols.end());
      std::string cols = "model_id", select = "?1";
      for (const std::string& c : runCols)
        if (have.count(c)) {
          cols += ", \"" + c + "\"";
          select += ", \"" + c + "\"";
        }
      SqlStatement runs = db.prepare("SELECT id, model_id FROM src.runs ORDER BY id");
      SqlStatement copyRun = db.prepare("INSERT INTO main.runs(" + cols + ") SELECT " + select +
                                        " FROM src.runs WHERE id = ?2");
      while (runs.step()) {
        const int64_t from = runs.getInt(0);
        copyRun.bind(1, modelIdIn(db, runs.getInt(1), stats)).bind(2, from).run();
        const int64_t to = db.lastInsertId();
        for (const char* table :
             {"passes", "nodes", "values", "edges", "pass_rows", "annotation_changes", "pass_accuracy", "timeline",
              "measured_profiles", "measured_tasks", "measured_static_memory"})
          copyRunRows(db, table, from, to);
        ++stats.runs;
      }
      runs.reset();
      tx.commit();
    } catch (...) {
      db.exec("DETACH DATABASE src");
      throw;
    }
    db.exec("DETACH DATABASE src");
  }
  return stats;
}

}  // namespace kiln
