#include "history/pass_rows.h"

#include <charconv>
#include <initializer_list>
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
  if (inRange(id, kIdLimit) && inRange(firstPass, kPassLimit))
    addPacked(id << kPassBits | firstPass);
  else
    addArray({id, firstPass});
}

void KeyList::add(int64_t node, int64_t index, int64_t firstPass) {
  if (inRange(node, kConsumerLimit) && inRange(index, kSlotLimit) && inRange(firstPass, kPassLimit))
    addPacked(node << (kPassBits + kSlotBits) | index << kPassBits | firstPass);
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

}  // namespace kiln::pass_rows
