// The thread pool for the workbench's long jobs (compiles, layouts, history reads, sweeps).
//
// Not QThreadPool::globalInstance(): Qt 6.4's raster engine fills large areas on the global pool's threads and the
// UI thread waits for them. With compiles or Graphviz layouts holding every global thread for seconds, each paint of a
// big fill waited that long (a 44k-node model stalled the window for seconds while a group was laid out). Our jobs
// live here, so the global pool stays free for painting.
#pragma once

#include <QThreadPool>

namespace kiln::views {

QThreadPool* workerPool();

}  // namespace kiln::views
