#pragma once
// Notices when another process (a `kiln batch`, a second workbench, `kiln compile --history`) writes into the
// history file a window shows, so the runs it records appear without reopening the file. It polls the size and
// modification time of the database and its write-ahead log: SQLite rewrites the WAL in place and deletes it when
// the last connection closes, which inotify-based watchers (QFileSystemWatcher) stop following after the first
// removal. A stat of two files per interval costs nothing next to a history read.
#include <QObject>
#include <QString>
#include <QTimer>

namespace kiln::views {

class HistoryWatcher : public QObject {
  Q_OBJECT
 public:
  explicit HistoryWatcher(QObject* parent = nullptr, int intervalMs = 1000);
  // The database to watch; empty stops watching. The state at this call counts as seen.
  void setPath(const QString& dbPath);
  QString path() const { return path_; }

 signals:
  void changed();  // the database or its WAL changed since the last signal (or setPath)

 private:
  QString stamp() const;
  void poll();

  QTimer timer_;
  QString path_, last_;
};

}  // namespace kiln::views
