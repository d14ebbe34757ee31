#include "history_watcher.h"

#include <QFileInfo>

namespace kiln::views {

HistoryWatcher::HistoryWatcher(QObject* parent, int intervalMs) : QObject(parent) {
  timer_.setInterval(intervalMs);
  connect(&timer_, &QTimer::timeout, this, &HistoryWatcher::poll);
}

void HistoryWatcher::setPath(const QString& dbPath) {
  path_ = dbPath;
  last_ = stamp();
  if (path_.isEmpty()) timer_.stop();
  else timer_.start();
}

QString HistoryWatcher::stamp() const {
  if (path_.isEmpty()) return {};
  QString s;
  for (const QString& f : {path_, path_ + "-wal"}) {
    const QFileInfo info(f);  // a fresh QFileInfo: no cached stat
    s += info.exists() ? QString("%1@%2;").arg(info.size()).arg(info.lastModified().toMSecsSinceEpoch()) : "-;";
  }
  return s;
}

void HistoryWatcher::poll() {
  const QString now = stamp();
  if (now == last_) return;
  last_ = now;
  emit changed();
}

}  // namespace kiln::views
