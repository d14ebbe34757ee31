#pragma once
// The pass_rows table (schema version 6): for each pass and graph table, the keys of the rows the pass started and
// of the rows it ended. What a pass (or a span of passes) changed is read from these lists, each row then looked up
// by its primary key; the graph tables themselves carry no index beyond their primary key. Since schema 7 the ended
// lists are the only record of when a row ended (RowEnds): the graph tables have no last_pass column.
//
// Why: schema 2-5 found those rows through partial (run_id, first_pass) and (run_id, last_pass) indexes on the
// three graph tables, so every row a pass opened or closed cost one or two more b-tree inserts. One row per pass
// and table holding the keys costs one insert: the history writer runs a tenth fewer instructions (callgrind,
// llama-32 sample 364M -> 326M, gpt2_past 295M -> 276M), and reading a diff costs about the same (+2%).
//
// Keys are JSON arrays of integers. A node or value row's key (id, first_pass) is id * 2^20 + first_pass; an edge
// row's (consumer_node, consumer_index, first_pass) is consumer_node * 2^36 + consumer_index * 2^20 + first_pass. A
// key outside those ranges (ids of 2^43, consumers of 2^27, input slots of 2^16, passes of 2^20: never met, but
// the ids are the model's) is written as an array [id, first_pass] / [consumer_node, consumer_index, first_pass].
// Pass 0, the import, lists no started keys (that would be every row); its rows are those with first_pass = 0.
//
// Why no last_pass (schema 7): setting it rewrote the whole row (attributes and all) in a WITHOUT ROWID b-tree,
// about 12k instructions a closed row; closes were 55% of the writer's instructions on gpt2_past, whose constant
// folding ends thousands of rows. The ended list already names every row a pass ended, so a reader maps keys to
// the pass that ended them instead (json_each decodes 66k keys in about 6 ms).
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

struct sqlite3;

namespace kiln::pass_rows {

enum class Table { Nodes, Values, Edges };

// The table's name as stored in pass_rows.graph_table (and as the graph table is named).
const char* tableName(Table t);

// A JSON array of keys, built up one key at a time.
class KeyList {
 public:
  void add(int64_t id, int64_t firstPass);                   // a node or value row
  void add(int64_t node, int64_t index, int64_t firstPass);  // an edge row
  bool empty() const { return keys_ == 0; }
  std::string_view json();  // the array, closed ("[]" when empty); no add() after it

 private:
  void separate();
  void addPacked(int64_t key);
  void addArray(std::initializer_list<int64_t> parts);
  std::string json_ = "[";
  size_t keys_ = 0;
  bool closed_ = false;
};

// SQL selecting the key columns of `t` ("node_id, first_pass", ...) decoded from a key list: "SELECT <columns>
// FROM json_each(<list>)". `list` is an SQL expression (a parameter, a column).
std::string decodeKeys(Table t, std::string_view list);

// "FROM ... WHERE ...": the rows of graph table `t` (as `g`) whose keys the passes seq > ?2 AND seq <= ?3 of run
// ?1 list in their `list` column ("started" or "ended"), each looked up by its whole primary key. The CROSS JOINs
// fix that order: left to itself SQLite scans the run's rows per key, and an IN (subquery) form builds a temporary
// index of the keys first, twice the time.
std::string listedRows(Table t, std::string_view list);

// The whole pass_rows table (re)built from the graph tables' first_pass and last_pass columns, for a file
// migrated from schema 5 or earlier (before migrateTo7 drops last_pass). Throws HistoryError.
void rebuild(sqlite3* db);

// The views node_ends, value_ends and edge_ends: each ended row's key columns with last_pass, the pass that ended
// it, for people who query the file (docs/history-schema.md). CREATE VIEW statements.
std::string endsViews();

// When each row of one run's graph table ended: the pass whose ended list names its key (none: still valid at
// the run's last pass). Throws HistoryError for a list that is not JSON.
class RowEnds {
 public:
  RowEnds() = default;
  RowEnds(sqlite3* db, int64_t run, Table t);
  std::optional<int> of(int64_t id, int64_t firstPass) const;                   // a node or value row
  std::optional<int> of(int64_t node, int64_t index, int64_t firstPass) const;  // an edge row
  size_t size() const { return packed_.size() + other_.size(); }

 private:
  std::optional<int> find(std::optional<int64_t> packed, const std::array<int64_t, 3>& parts) const;
  std::unordered_map<int64_t, int> packed_;
  std::map<std::array<int64_t, 3>, int> other_;  // keys outside the packing (parts; an unused last part is 0)
};

}  // namespace kiln::pass_rows
