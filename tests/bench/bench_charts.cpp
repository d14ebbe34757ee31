// Memory view and Gantt chart benchmark (offscreen): generated llama models (weights as shaped inputs; 8, 32 and 320
// layers, with and without fusion) compiled in process, then for each view: the chart data built by the engine (what the workbench's worker thread does), the
// open (setChart + first paint on the UI thread) and the frame time while panning — 60 drag steps with a repaint
// each, measured with QElapsedTimer — at the fitted zoom (everything on screen) and zoomed in 16×. Prints a table and
// writes JSON; asserts nothing (speed is measured, not tested).
#include <QApplication>
#include <QElapsedTimer>
#include <QMouseEvent>
#include <algorithm>
#include <cstdio>

#include "bench_json.h"
#include "emulator/timing/soc_profile.h"
#include "emulator/timing/timeline_sim.h"
#include "gantt_plot.h"
#include "gantt_view.h"
#include "ir/graph.h"
#include "ir/model.h"
#include "memory_plot.h"
#include "memory_view.h"
#include "options/options.h"
#include "passes/pass_manager.h"
#include "pipeline/standard_pipeline.h"
#include "report/memory_chart.h"
#include "report/timeline_chart.h"
#include "samples/sample_models.h"
#include "schedule/task_list.h"

using namespace kiln;

namespace {

struct Frames {
  double meanMs = 0, maxMs = 0;
};

// Drags across the plot in small steps, repainting after each: what a person panning sees.
Frames pan(QWidget* plot, int steps) {
  Frames f;
  QElapsedTimer t;
  const QPoint start(plot->width() / 2, plot->height() / 3);
  QMouseEvent press(QEvent::MouseButtonPress, start, plot->mapToGlobal(start), Qt::LeftButton, Qt::LeftButton, {});
  QApplication::sendEvent(plot, &press);
  for (int i = 1; i <= steps; ++i) {
    const QPoint at = start + QPoint((i % 20 < 10 ? -15 : 15) * (i % 10), i % 2 ? 3 : -3);
    t.start();
    QMouseEvent move(QEvent::MouseMove, at, plot->mapToGlobal(at), Qt::NoButton, Qt::LeftButton, {});
    QApplication::sendEvent(plot, &move);
    plot->repaint();
    const double ms = double(t.nsecsElapsed()) / 1e6;
    f.meanMs += ms / steps;
    f.maxMs = std::max(f.maxMs, ms);
  }
  QMouseEvent release(QEvent::MouseButtonRelease, start, plot->mapToGlobal(start), Qt::LeftButton, Qt::NoButton, {});
  QApplication::sendEvent(plot, &release);
  return f;
}

double msSince(const QElapsedTimer& t) { return double(t.nsecsElapsed()) / 1e6; }

}  // namespace

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication qapp(argc, argv);
  const std::string jsonPath = argc > 1 ? argv[1] : KILN_BENCH_OUT_DIR "/bench_charts.json";
  std::printf("%-18s %-7s %8s %12s %9s %14s %14s %14s %14s\n", "model", "view", "items", "data ms", "open ms",
              "pan mean ms", "pan max ms", "zoomed mean", "zoomed max");
  Json rows = Json::array();
  // The standard pipeline, then without fusion (oo_level O1: every op its own task and tensor), then a deep model
  // without fusion for tens of thousands of tasks and tensors.
  const std::vector<std::pair<int, std::string>> configs = {{8, "O3"}, {32, "O3"}, {32, "O1"}, {320, "O1"}};
  for (const auto& [layers, level] : configs) {
    SampleOptions so;
    so.layers = layers;
    so.weights = false;
    auto model = buildSample("llama", so);
    Options options;
    options.set("oo_level=" + level);
    PassManager pm;
    addStandardPasses(pm, options);
    QElapsedTimer t;
    t.start();
    const RunSummary s = pm.run(*model, options);
    const double compileMs = msSince(t);
    const std::string label = "llama " + std::to_string(layers) + " " + level;
    if (s.status != RunStatus::Ok) {
      std::printf("%-18s compile failed: %s\n", label.c_str(), s.error.c_str());
      continue;
    }
    std::printf("%-18s compiled in %.0f ms (%lld nodes)\n", label.c_str(), compileMs, static_cast<long long>(s.nodesAfter));

    t.restart();
    auto memory = std::make_shared<const MemoryChart>(buildMemoryChart(*model->graph));
    const double memoryDataMs = msSince(t);
    t.restart();
    const SocProfile soc = SocProfile::load(options.getString("soc_version"));
    const Timeline tl = simulateTimeline(buildTaskList(*model->graph, soc.aiCores), soc, options.getBool("model_sink"));
    auto timeline = std::make_shared<const TimelineChart>(timelineChartFromSimulation(tl, soc));
    const double timelineDataMs = msSince(t);

    auto measure = [&](const char* view, QWidget& w, QWidget* plot, size_t items, double dataMs, auto openView, auto zoomIn) {
      w.resize(1400, 520);
      w.show();
      QApplication::processEvents();
      t.restart();
      openView();
      plot->repaint();
      const double openMs = msSince(t);
      const Frames fitted = pan(plot, 60);
      zoomIn();
      const Frames zoomed = pan(plot, 60);
      std::printf("%-18s %-7s %8zu %12.1f %9.1f %14.2f %14.2f %14.2f %14.2f\n", label.c_str(), view, items, dataMs,
                  openMs, fitted.meanMs, fitted.maxMs, zoomed.meanMs, zoomed.maxMs);
      Json j = Json::object();
      j.set("model", label);
      j.set("view", std::string(view));
      j.set("nodes", s.nodesAfter);
      j.set("compile_ms", compileMs);
      j.set("items", static_cast<int64_t>(items));
      j.set("data_ms", dataMs);
      j.set("open_ms", openMs);
      j.set("pan_frame_mean_ms", fitted.meanMs);
      j.set("pan_frame_max_ms", fitted.maxMs);
      j.set("zoomed_pan_frame_mean_ms", zoomed.meanMs);
      j.set("zoomed_pan_frame_max_ms", zoomed.maxMs);
      rows.push(std::move(j));
    };
    {
      views::MemoryView view;
      measure("memory", view, view.plot(), memory->blocks.size(), memoryDataMs, [&] { view.setChart(memory); },
              [&] { view.plot()->zoomSteps(16); });
    }
    {
      views::GanttView view;
      measure("gantt", view, view.plot(), timeline->tasks.size(), timelineDataMs, [&] { view.setChart(timeline); },
              [&] { view.plot()->zoomTime(16); });
    }
  }
  std::printf("\n(targets from issue 8: open <= 1000 ms for llama --layers 32; frames well under 16 ms pan smoothly)\n");
  Json out = Json::object();
  out.set("charts", std::move(rows));
  return writeBenchJson(out, jsonPath);
}
