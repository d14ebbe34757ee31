#include "history/measured_tasks.h"

#include <cmath>

namespace kiln {

namespace {

bool tableExists(const HistoryDb& db, const char* table) {
  SqlStatement s = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  s.bind(1, table);
  return s.step();
}

}  // namespace

void writeMeasuredRun(HistoryDb& db, int64_t runId, const MeasuredRun& m) {
  SqlTransaction tx(db.handle(), SqlTransaction::Kind::Write);
  for (const char* table : {"measured_profiles", "measured_tasks", "measured_static_memory"})
    db.prepare(std::string("DELETE FROM ") + table + " WHERE run_id = ?1").bind(1, runId).run();
  db.prepare(
        "INSERT INTO measured_profiles(run_id, source, tasks_file, imported_at, skipped_rows, static_total_bytes) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
      .bind(1, runId)
      .bind(2, m.profile.source)
      .bind(3, m.profile.tasksFile)
      .bind(4, m.profile.importedAt)
      .bind(5, m.profile.skippedRows)
      .bind(6, m.profile.staticTotalBytes)
      .run();
  SqlStatement t = db.prepare(
      "INSERT INTO measured_tasks(run_id, task, name, op_type, task_type, stream, start_us, duration_us, wait_us, "
      "block_dim, input_shapes, input_types, output_shapes, output_types, node_id, matched_by) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)");
  for (const MeasuredTaskRow& r : m.tasks) {
    t.bind(1, runId).bind(2, r.task).bind(3, r.name).bind(4, r.opType).bind(5, r.taskType).bind(6, r.stream);
    t.bind(7, r.startUs).bind(8, r.durationUs).bind(9, r.waitUs).bind(10, r.blockDim);
    t.bind(11, r.inputShapes).bind(12, r.inputTypes).bind(13, r.outputShapes).bind(14, r.outputTypes);
    t.bind(15, r.nodeId).bind(16, r.matchedBy);
    t.run();
  }
  SqlStatement s = db.prepare(
      "INSERT INTO measured_static_memory(run_id, seq, op_name, graph, bytes, node_start, node_end) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  for (const StaticMemoryRow& r : m.staticMemory) {
    s.bind(1, runId).bind(2, r.seq).bind(3, r.opName).bind(4, r.graph).bind(5, r.bytes).bind(6, r.nodeStart);
    s.bind(7, r.nodeEnd);
    s.run();
  }
  tx.commit();
}

bool hasMeasuredRun(const HistoryDb& db, int64_t runId) {
  if (!tableExists(db, "measured_profiles")) return false;
  SqlStatement s = db.prepare("SELECT 1 FROM measured_profiles WHERE run_id = ?1");
  s.bind(1, runId);
  return s.step();
}

MeasuredRun readMeasuredRun(const HistoryDb& db, int64_t runId) {
  MeasuredRun m;
  if (!tableExists(db, "measured_profiles")) return m;
  SqlStatement p = db.prepare(
      "SELECT source, tasks_file, imported_at, skipped_rows, static_total_bytes FROM measured_profiles "
      "WHERE run_id = ?1");
  p.bind(1, runId);
  if (!p.step()) return m;
  m.profile.source = p.getText(0);
  m.profile.tasksFile = p.getText(1);
  m.profile.importedAt = p.getText(2);
  m.profile.skippedRows = p.getInt(3);
  m.profile.staticTotalBytes = p.getOptInt(4);
  SqlStatement t = db.prepare(
      "SELECT task, name, op_type, task_type, stream, start_us, duration_us, wait_us, block_dim, input_shapes, "
      "input_types, output_shapes, output_types, node_id, matched_by FROM measured_tasks WHERE run_id = ?1 "
      "ORDER BY task");
  t.bind(1, runId);
  while (t.step()) {
    MeasuredTaskRow r;
    r.task = t.getInt(0);
    r.name = t.getText(1);
    r.opType = t.getText(2);
    r.taskType = t.getText(3);
    r.stream = t.getInt(4);
    r.startUs = t.getDouble(5);
    r.durationUs = t.getDouble(6);
    // A row a damaged or hostile file holds: times that cannot be drawn are dropped, not drawn.
    if (!std::isfinite(r.startUs) || !std::isfinite(r.durationUs) || r.durationUs < 0 || r.startUs < 0) continue;
    if (!t.isNull(7)) r.waitUs = t.getDouble(7);
    r.blockDim = t.getOptInt(8);
    r.inputShapes = t.getText(9);
    r.inputTypes = t.getText(10);
    r.outputShapes = t.getText(11);
    r.outputTypes = t.getText(12);
    r.nodeId = t.getOptInt(13);
    r.matchedBy = t.getText(14);
    m.tasks.push_back(std::move(r));
  }
  SqlStatement s = db.prepare(
      "SELECT seq, op_name, graph, bytes, node_start, node_end FROM measured_static_memory WHERE run_id = ?1 "
      "ORDER BY seq");
  s.bind(1, runId);
  while (s.step()) {
    StaticMemoryRow r;
    r.seq = s.getInt(0);
    r.opName = s.getText(1);
    r.graph = s.getText(2);
    r.bytes = s.getInt(3);
    r.nodeStart = s.getInt(4);
    r.nodeEnd = s.getInt(5);
    if (r.bytes < 0) continue;
    m.staticMemory.push_back(std::move(r));
  }
  return m;
}

}  // namespace kiln
