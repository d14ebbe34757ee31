#include "history/history_emulation.h"

namespace kiln {

namespace {

std::optional<double> optionalDouble(const SqlStatement& s, int column) {
  if (s.isNull(column)) return std::nullopt;
  return s.getDouble(column);
}

}  // namespace

void writePassAccuracy(HistoryDb& db, int64_t runId, const PassAccuracyRow& row) {
  SqlTransaction tx(db.handle(), SqlTransaction::Kind::Write);
  SqlStatement s = db.prepare(
      "INSERT OR REPLACE INTO pass_accuracy(run_id, seq, status, max_abs, max_rel, cosine, detail) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  s.bind(1, runId).bind(2, row.seq).bind(3, row.status);
  s.bind(4, row.maxAbs);
  s.bind(5, row.maxRel);
  s.bind(6, row.cosine);
  s.bind(7, row.detail);
  s.run();
  tx.commit();
}

void writeTimeline(HistoryDb& db, int64_t runId, const std::vector<TimelineRow>& rows) {
  SqlTransaction tx(db.handle(), SqlTransaction::Kind::Write);
  db.prepare("DELETE FROM timeline WHERE run_id = ?1").bind(1, runId).run();
  SqlStatement s = db.prepare(
      "INSERT INTO timeline(run_id, task, type, node_id, stream, event, unit, cores, start_us, end_us, flops, bytes, "
      "memory_bound, critical) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
  for (const TimelineRow& r : rows) {
    s.bind(1, runId).bind(2, r.task).bind(3, r.type).bind(4, r.nodeId).bind(5, r.stream);
    s.bind(6, r.event ? std::optional<int64_t>(*r.event) : std::nullopt);
    s.bind(7, r.unit).bind(8, r.cores).bind(9, r.startUs).bind(10, r.endUs).bind(11, r.flops).bind(12, r.bytes);
    s.bind(13, r.costUnknown ? 2 : r.memoryBound ? 1 : 0).bind(14, r.critical ? 1 : 0);
    s.run();
  }
  tx.commit();
}

std::vector<PassAccuracyRow> readPassAccuracy(const HistoryDb& db, int64_t runId) {
  std::vector<PassAccuracyRow> rows;
  SqlStatement s = db.prepare(
      "SELECT seq, status, max_abs, max_rel, cosine, detail FROM pass_accuracy WHERE run_id = ?1 ORDER BY seq");
  s.bind(1, runId);
  while (s.step()) {
    PassAccuracyRow r;
    r.seq = static_cast<int>(s.getInt(0));
    r.status = s.getText(1);
    r.maxAbs = optionalDouble(s, 2);
    r.maxRel = optionalDouble(s, 3);
    r.cosine = optionalDouble(s, 4);
    r.detail = s.getText(5);
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<TimelineRow> readTimeline(const HistoryDb& db, int64_t runId) {
  std::vector<TimelineRow> rows;
  SqlStatement s = db.prepare(
      "SELECT task, type, node_id, stream, event, unit, cores, start_us, end_us, flops, bytes, memory_bound, critical "
      "FROM timeline WHERE run_id = ?1 ORDER BY task");
  s.bind(1, runId);
  while (s.step()) {
    TimelineRow r;
    r.task = static_cast<int>(s.getInt(0));
    r.type = s.getText(1);
    if (!s.isNull(2)) r.nodeId = s.getInt(2);
    r.stream = static_cast<int>(s.getInt(3));
    if (!s.isNull(4)) r.event = static_cast<int>(s.getInt(4));
    r.unit = s.getText(5);
    r.cores = static_cast<int>(s.getInt(6));
    r.startUs = s.getDouble(7);
    r.endUs = s.getDouble(8);
    r.flops = s.getDouble(9);
    r.bytes = s.getDouble(10);
    r.memoryBound = s.getInt(11) == 1;
    r.costUnknown = s.getInt(11) == 2;
    r.critical = s.getInt(12) != 0;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace kiln
