#include "worker_pool.h"

namespace kiln::views {

QThreadPool* workerPool() {
  static QThreadPool* pool = [] {
    auto* p = new QThreadPool;  // lives as long as the process: jobs may still be finishing at exit
    p->setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
    p->setObjectName("kiln-workers");
    return p;
  }();
  return pool;
}

}  // namespace kiln::views
