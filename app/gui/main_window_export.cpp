// MainWindow's File ▸ Export: what is on screen, written for other tools — the graph as SVG/PNG, the memory plan as
// CSV/JSON, the simulated timeline as a Chrome trace (Perfetto).
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>

#include "export_files.h"
#include "gantt_view.h"
#include "graph_canvas.h"
#include "main_window.h"
#include "memory_view.h"
#include "report/chrome_trace.h"
#include "report/memory_chart.h"

namespace kiln::app {

namespace {

QString baseName(const QString& modelPath, qint64 run) {
  const QString stem = modelPath.isEmpty() ? QString("kiln") : QFileInfo(modelPath).completeBaseName();
  return QString("%1_run%2").arg(stem).arg(run);
}

}  // namespace

void MainWindow::buildExportMenu(QMenu* file) {
  QMenu* menu = file->addMenu("&Export");
  auto ask = [this](const QString& title, const QString& suggested, const QString& filter) {
    return QFileDialog::getSaveFileName(this, title, suggested, filter);
  };
  menu->addAction("&Graph as SVG or PNG…", this, [this, ask] {
    const QString path = ask("Export the graph", baseName(modelPath_, runId_) + QString("_pass%1.svg").arg(pass_),
                             "SVG (*.svg);;PNG (*.png)");
    if (!path.isEmpty()) exportGraph(path);
  });
  menu->addAction("&Memory Plan as CSV or JSON…", this, [this, ask] {
    const QString path = ask("Export the memory plan", baseName(modelPath_, runId_) + "_memory.csv",
                             "CSV (*.csv);;JSON (*.json)");
    if (!path.isEmpty()) exportMemoryPlan(path);
  });
  menu->addAction("&Timeline as Chrome Trace…", this, [this, ask] {
    const QString path = ask("Export the timeline", baseName(modelPath_, runId_) + "_trace.json",
                             "Chrome trace JSON (*.json)");
    if (!path.isEmpty()) exportTimeline(path);
  });
}

QString MainWindow::exportGraph(const QString& path) {
  QString error = canvas_->passView() && canvas_->scene()
                      ? views::exportSceneImage(*canvas_->scene(), path)
                      : path + ": no graph is shown";
  if (error.isEmpty()) log("exported the graph to " + path);
  else showError(error);
  return error;
}

QString MainWindow::exportMemoryPlan(const QString& path) {
  const MemoryChart* chart = memoryView_->chart();
  QString error;
  if (!chart || !chart->planned) {
    error = path + ": the run shown has no memory plan";
  } else {
    const bool json = QFileInfo(path).suffix().compare("json", Qt::CaseInsensitive) == 0;
    error = views::writeTextFile(path, json ? memoryChartJson(*chart).dump(2) + "\n" : memoryChartCsv(*chart));
  }
  if (error.isEmpty()) log("exported the memory plan to " + path);
  else showError(error);
  return error;
}

QString MainWindow::exportTimeline(const QString& path) {
  const TimelineChart* chart = ganttView_->chart();
  QString error = chart ? views::writeTextFile(path, chromeTraceJson(*chart, baseName(modelPath_, runId_).toStdString()))
                        : path + ": the run shown has no timeline";
  if (error.isEmpty()) log("exported the timeline to " + path);
  else showError(error);
  return error;
}

}  // namespace kiln::app
