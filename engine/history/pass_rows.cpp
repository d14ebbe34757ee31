#include "history/pass_rows.h"

#include <array>
#include <charconv>
#include <initializer_list>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "history/sqlite_handle.h"

namespace kiln::pass_rows {

namespace {

// The packing (pass_rows.h): 20 bits of pass, 16 of input slot; ids below 2^43, edge consumers below 2^27, so a
// packed key stays a positive 63-bit integer.
constexpr int kPassBits = 20, kSlotBits = 16;
constexpr int64_t kPassLimit = int64_t{1} << kPassBits;
constexpr int64_t kIdLimit = int64_t{1} << (63 - kPassBits);
constexpr int64_t kSlotLimit = int64_t{1} << kSlotBits;
constexpr int64_t kConsumerLimit = int64_t{1} << (63 - kPassBits - kSlotBits);

bool inRange(int64_t v, int64_t limit) { return v >= 0 && v < limit; }

// A row's packed key, or none when a part is outside the packing.
std::optional<int64_t> packed(int64_t id, int64_t firstPass) {
  if (!inRange(id, kIdLimit) || !inRange(firstPass, kPassLimit)) return std::nullopt;
  return id << kPassBits | firstPass;
}
std::optional<int64_t> packed(int64_t node, int64_t index, int64_t firstPass) {
  if (!inRange(node, kConsumerLimit) || !inRange(index, kSlotLimit) || !inRange(firstPass, kPassLimit))
    return std::nullopt;
  return node << (kPassBits + kSlotBits) | index << kPassBits | firstPass;
}

void appendInt(std::string& s, int64_t v) {
  char buf[24];
  s.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
}

// The key columns of each graph table, in primary-key order after run_id.
std::vector<const char*> keyColumns(Table t) {
  switch (t) {
    case Table::Nodes: return {"node_id", "first_pass"};
    case Table::Values: return {"value_id", "first_pass"};
    case Table::Edges: return {"consumer_node", "consumer_index", "first_pass"};
  }
  return {};
}

// SQL packing the key columns of a graph table's row into its key (an integer, or an array when out of range).
std::string packSql(Table t) {
  const std::string pass = "first_pass >= 0 AND first_pass < " + std::to_string(kPassLimit);
  if (t == Table::Edges)
    return "CASE WHEN consumer_node >= 0 AND consumer_node < " + std::to_string(kConsumerLimit) +
           " AND consumer_index >= 0 AND consumer_index < " + std::to_string(kSlotLimit) + " AND " + pass +
           " THEN (consumer_node << " + std::to_string(kPassBits + kSlotBits) + ") | (consumer_index << " +
           std::to_string(kPassBits) + ") | first_pass ELSE json_array(consumer_node, consumer_index, first_pass) END";
  const char* id = t == Table::Nodes ? "node_id" : "value_id";
  return std::string("CASE WHEN ") + id + " >= 0 AND " + id + " < " + std::to_string(kIdLimit) + " AND " + pass +
         " THEN (" + id + " << " + std::to_string(kPassBits) + ") | first_pass ELSE json_array(" + id +
         ", first_pass) END";
}

// The key columns decoded from the keys of a json_each aliased `j`; json_extract reads an out-of-range key's array.
std::vector<std::string> decodedColumns(Table t) {
  auto part = [](const std::string& packed, int index) {
    return "CASE WHEN j.type = 'integer' THEN " + packed + " ELSE json_extract(j.value, '$[" +
           std::to_string(index) + "]') END";
  };
  const std::string pass = "j.value & " + std::to_string(kPassLimit - 1);
  if (t == Table::Edges)
    return {part("j.value >> " + std::to_string(kPassBits + kSlotBits), 0),
            part("(j.value >> " + std::to_string(kPassBits) + ") & " + std::to_string(kSlotLimit - 1), 1),
            part(pass, 2)};
  return {part("j.value >> " + std::to_string(kPassBits), 0), part(pass, 1)};
}

}  // namespace

const char* tableName(Table t) {
  switch (t) {
    case Table::Nodes: return "nodes";
    case Table::Values: return "values";
    case Table::Edges: return "edges";
  }
  return "";
}

void KeyList::separate() {
  if (keys_++) json_ += ',';
}

void KeyList::add(int64_t id, int64_t firstPass) {
  if (const auto key = packed(id, firstPass))
    addPacked(*key);
  else
    addArray({id, firstPass});
}

void KeyList::add(int64_t node, int64_t index, int64_t firstPass) {
  if (const auto key = packed(node, index, firstPass))
    addPacked(*key);
  else
    addArray({node, index, firstPass});
}

void KeyList::addPacked(int64_t key) {
  separate();
  appendInt(json_, key);
}

void KeyList::addArray(std::initializer_list<int64_t> parts) {
  separate();
  char open = '[';
  for (int64_t part : parts) {
    json_ += open;
    appendInt(json_, part);
    open = ',';
  }
  json_ += ']';
}

std::string_view KeyList::json() {
  if (!closed_) json_ += ']';
  closed_ = true;
  return json_;
}

std::string decodeKeys(Table t, std::string_view list) {
  std::string columns;
  for (const std::string& c : decodedColumns(t)) columns += (columns.empty() ? "" : ", ") + c;
  return "SELECT " + columns + " FROM json_each(" + std::string(list) + ") j";
}

std::string listedRows(Table t, std::string_view list) {
  std::string sql = "FROM pass_rows p CROSS JOIN json_each(p." + std::string(list) + ") j CROSS JOIN \"" +
                    tableName(t) + "\" g WHERE p.run_id = ?1 AND p.graph_table = '" + tableName(t) +
                    "' AND p.seq > ?2 AND p.seq <= ?3 AND g.run_id = ?1";
  const std::vector<const char*> columns = keyColumns(t);
  const std::vector<std::string> decoded = decodedColumns(t);
  for (size_t i = 0; i < columns.size(); ++i) sql += std::string(" AND g.") + columns[i] + " = " + decoded[i];
  return sql;
}

void rebuild(sqlite3* db) {
  sqlExec(db, "DELETE FROM pass_rows");
  for (Table t : {Table::Nodes, Table::Values, Table::Edges}) {
    const std::string table = std::string("\"") + tableName(t) + "\"", key = packSql(t);
    // json() keeps an out-of-range key an array inside the list rather than the array's text.
    sqlExec(db, "INSERT INTO pass_rows(run_id, seq, graph_table, started, ended) SELECT run_id, seq, '" +
                    std::string(tableName(t)) +
                    "', json_group_array(CASE WHEN typeof(k) = 'integer' THEN k ELSE json(k) END) FILTER (WHERE s), "
                    "json_group_array(CASE WHEN typeof(k) = 'integer' THEN k ELSE json(k) END) FILTER (WHERE NOT s) "
                    "FROM (SELECT run_id, first_pass AS seq, 1 AS s, " + key + " AS k FROM " + table +
                    " WHERE first_pass > 0 UNION ALL SELECT run_id, last_pass, 0, " + key + " FROM " + table +
                    " WHERE last_pass IS NOT NULL) GROUP BY run_id, seq");
  }
}

std::string endsViews() {
  std::string sql;
  for (Table t : {Table::Nodes, Table::Values, Table::Edges}) {
    const std::string table = tableName(t);
    std::string columns = "run_id", decoded = "p.run_id";
    const std::vector<const char*> names = keyColumns(t);
    const std::vector<std::string> parts = decodedColumns(t);
    for (size_t i = 0; i < names.size(); ++i) {
      columns += std::string(", ") + names[i];
      // CAST gives the column INTEGER affinity, as the graph tables' keys have: without it a join on the keys
      // cannot use an automatic index and compares every pair (5 s against 34 ms on a 12k-node run).
      decoded += ", CAST(" + parts[i] + " AS INTEGER)";
    }
    sql += "CREATE VIEW " + table.substr(0, table.size() - 1) + "_ends(" + columns + ", last_pass) AS SELECT " +
           decoded + ", p.seq FROM pass_rows p CROSS JOIN json_each(p.ended) j WHERE p.graph_table = '" + table +
           "';\n";
  }
  return sql;
}

namespace {

// Reads a key list as the writer and rebuild() write it: integers, or arrays of two or three integers for keys
// outside the packing, comma-separated in brackets (whitespace allowed, as JSON does). Parsed here rather than by
// json_each: a 12k-node run ends 66k rows and every graph read needs them all. False for anything else.
class KeyListParser {
 public:
  explicit KeyListParser(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  template <typename Packed, typename Parts>
  bool parse(Packed packed, Parts parts) {
    if (!take('[')) return false;
    if (take(']')) return atEnd();
    do {
      if (take('[')) {
        std::array<int64_t, 3> v{};
        size_t n = 0;
        do {
          if (n == v.size() || !number(v[n++])) return false;
        } while (take(','));
        if (n < 2 || !take(']')) return false;
        parts(v);
      } else {
        int64_t v = 0;
        if (!number(v)) return false;
        packed(v);
      }
    } while (take(','));
    return take(']') && atEnd();
  }

 private:
  const char* p_;
  const char* end_;
  void skipSpace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\t' || *p_ == '\r')) ++p_;
  }
  bool take(char c) {
    skipSpace();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  bool number(int64_t& v) {
    skipSpace();
    const auto r = std::from_chars(p_, end_, v);
    if (r.ec != std::errc()) return false;
    p_ = r.ptr;
    return true;
  }
  bool atEnd() {
    skipSpace();
    return p_ == end_;
  }
};

}  // namespace

RowEnds::RowEnds(sqlite3* db, int64_t run, Table t) {
  SqlStatement q(db, "SELECT seq, ended FROM pass_rows WHERE run_id = ?1 AND graph_table = ?2 AND seq > 0");
  q.bind(1, run).bind(2, tableName(t));
  // Rows end once; should a key be listed twice, the earlier pass (rows come in seq order) ended it.
  while (q.step()) {
    const int seq = static_cast<int>(q.getInt(0));
    const std::string list = q.getText(1);
    const bool ok = KeyListParser(list).parse([&](int64_t key) { packed_.emplace(key, seq); },
                                              [&](const std::array<int64_t, 3>& parts) { other_.emplace(parts, seq); });
    if (!ok)
      throw HistoryError("pass " + std::to_string(seq) + ": the " + tableName(t) + " ended list is not a key list");
  }
}

std::optional<int> RowEnds::find(std::optional<int64_t> key, const std::array<int64_t, 3>& parts) const {
  if (key) {
    auto it = packed_.find(*key);
    if (it != packed_.end()) return it->second;
    return std::nullopt;
  }
  auto it = other_.find(parts);
  if (it != other_.end()) return it->second;
  return std::nullopt;
}

std::optional<int> RowEnds::of(int64_t id, int64_t firstPass) const {
  return find(packed(id, firstPass), {id, firstPass, 0});
}

std::optional<int> RowEnds::of(int64_t node, int64_t index, int64_t firstPass) const {
  return find(packed(node, index, firstPass), {node, index, firstPass});
}

}  // namespace kiln::pass_rows
