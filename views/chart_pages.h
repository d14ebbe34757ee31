#pragma once
// The frame both chart views (memory, timeline) share: a message page saying why there is no chart, and the chart
// page — a bar with the summary line, the view's own controls and a Fit button, the chart's widgets below it.
#include <QStackedWidget>

class QHBoxLayout;
class QLabel;
class QPushButton;
class QVBoxLayout;

namespace kiln::views {

class ChartPages : public QStackedWidget {
  Q_OBJECT
 public:
  ChartPages(const QString& initialMessage, const QString& fitTip, QWidget* parent);
  QWidget* chartPage() const { return chartPage_; }
  void addControl(QWidget* w);          // in the bar, before Fit
  QVBoxLayout* body() const { return body_; }  // below the bar
  QPushButton* fitButton() const { return fit_; }

  void showMessage(const QString& text);
  void showChart(const QString& summary);
  bool showsChart() const { return currentIndex() == 1; }
  QString message() const;
  QString summary() const;  // the line above the chart ("" while a message shows)

 private:
  QLabel* message_;
  QWidget* chartPage_;
  QHBoxLayout* bar_;
  QVBoxLayout* body_;
  QLabel* summary_;
  QPushButton* fit_;
};

}  // namespace kiln::views
