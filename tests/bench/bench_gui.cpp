// Workbench benchmark (offscreen): time from opening a file to the first painted graph (groups closed) for the
// bundled sample, gpt2_past (../shared, skipped when absent) and a generated llama with 32 layers; the longest
// stall of the UI thread meanwhile (a 5 ms heartbeat timer measures the largest gap between its ticks); and how long
// opening the largest group takes. The stall of the window's first show is reported apart ("startup stall"). Prints a table and writes JSON; asserts nothing (speed is measured, not tested).
#include <QApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <cstdio>
#include <fstream>

#include "graph_canvas.h"
#include "io/onnx/onnx_writer.h"
#include "main_window.h"
#include "samples/sample_models.h"
#include "util/json.h"

using namespace kiln;

namespace {

struct Heartbeat {
  QElapsedTimer clock;
  qint64 last = 0, worst = 0;
  QTimer timer;
  Heartbeat() {
    clock.start();
    timer.setInterval(5);
    QObject::connect(&timer, &QTimer::timeout, [this] {
      const qint64 now = clock.elapsed();
      worst = std::max(worst, now - last);
      last = now;
    });
  }
  void reset() {
    last = clock.elapsed();
    worst = 0;
    timer.start();
  }
};

bool waitFor(const std::function<bool()>& done, int ms) {
  QElapsedTimer t;
  t.start();
  while (!done()) {
    if (t.elapsed() > ms) return false;
    QApplication::processEvents(QEventLoop::AllEvents, 5);
  }
  return true;
}

bool settled(app::MainWindow& w) { return !w.busy() && w.canvas()->passView() && !w.canvas()->scene()->items().isEmpty(); }

}  // namespace

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication qapp(argc, argv);
  QStandardPaths::setTestModeEnabled(true);
  const std::string jsonPath = argc > 1 ? argv[1] : "bench_gui.json";
  QTemporaryDir tmp;
  const QString llama = tmp.filePath("llama32.onnx");
  SampleOptions so;
  so.layers = 32;
  so.weights = false;
  writeOnnxFile(*buildSample("llama", so), llama.toStdString());

  std::vector<std::pair<QString, QString>> models = {{"sample (mobilenetv2)", KILN_SAMPLE},
                                                     {"gpt2_past", QString(KILN_SHARED_DIR) + "/models/transformer/gpt2_past.onnx"},
                                                     {"llama --layers 32", llama}};
  std::printf("%-22s %8s %14s %16s %18s %16s %14s\n", "model", "nodes", "first paint ms", "UI stall max ms",
              "largest group", "open group ms", "startup stall");
  Json rows = Json::array();
  for (const auto& [label, path] : models) {
    if (!QFileInfo::exists(path)) {
      std::printf("%-22s skipped (%s not present)\n", qPrintable(label), qPrintable(path));
      continue;
    }
    app::MainWindow w;
    w.setHistoryPath(tmp.filePath(label.left(5) + ".db"));
    w.resize(1400, 900);
    w.show();
    Heartbeat hb;
    hb.reset();
    // The window's own first show (style, fonts, glyph caches) is startup, reported apart from the open.
    waitFor([&] { return hb.clock.elapsed() > 300; }, 1000);
    const qint64 startupStall = hb.worst;
    hb.reset();
    QElapsedTimer t;
    t.start();
    w.openPath(path);
    const bool ok = waitFor([&] { return settled(w); }, 300000);
    const double firstPaint = static_cast<double>(t.elapsed());
    const qint64 stallOpen = hb.worst;
    // The largest closed group at the top level, opened.
    const auto& tree = w.canvas()->scopes();
    int largest = -1;
    for (const auto& it : tree.group(0).items)
      if (it.isGroup && (largest < 0 || tree.group(static_cast<int>(it.id)).totalNodes > tree.group(largest).totalNodes))
        largest = static_cast<int>(it.id);
    double openMs = 0;
    int64_t largestNodes = 0;
    hb.reset();
    if (ok && largest > 0) {
      largestNodes = tree.group(largest).totalNodes;
      t.restart();
      w.canvas()->openGroup(largest, true);
      waitFor([&] { return settled(w); }, 300000);
      openMs = static_cast<double>(t.elapsed());
    }
    const qint64 stall = std::max(stallOpen, hb.worst);
    const auto nodes = w.canvas()->passView() ? w.canvas()->passView()->nodes.size() : 0;
    std::printf("%-22s %8zu %14.0f %16lld %18lld %16.0f %14lld%s\n", qPrintable(label), nodes, firstPaint,
                static_cast<long long>(stall), static_cast<long long>(largestNodes), openMs,
                static_cast<long long>(startupStall), ok ? "" : "  (timed out)");
    Json j = Json::object();
    j.set("model", label.toStdString());
    j.set("nodes", static_cast<int64_t>(nodes));
    j.set("first_paint_ms", firstPaint);
    j.set("ui_stall_max_ms", static_cast<int64_t>(stall));
    j.set("largest_group_nodes", largestNodes);
    j.set("open_largest_group_ms", openMs);
    j.set("startup_stall_ms", static_cast<int64_t>(startupStall));
    j.set("ok", ok);
    rows.push(std::move(j));
  }
  Json out = Json::object();
  out.set("gui", std::move(rows));
  std::ofstream(jsonPath) << out.dump(2) << "\n";
  std::printf("\nJSON: %s (targets: first paint <= 1000 ms for the sample and gpt2_past; UI stalls <= 50 ms)\n",
              jsonPath.c_str());
  return 0;
}
