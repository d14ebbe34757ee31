#include "chart_pages.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace kiln::views {

ChartPages::ChartPages(const QString& initialMessage, const QString& fitTip, QWidget* parent) : QStackedWidget(parent) {
  message_ = new QLabel(initialMessage, this);
  message_->setAlignment(Qt::AlignCenter);
  message_->setWordWrap(true);
  message_->setMargin(24);
  addWidget(message_);

  chartPage_ = new QWidget(this);
  body_ = new QVBoxLayout(chartPage_);
  body_->setContentsMargins(4, 4, 4, 4);
  bar_ = new QHBoxLayout;
  summary_ = new QLabel(chartPage_);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  bar_->addWidget(summary_, 1);
  fit_ = new QPushButton("Fit", chartPage_);
  fit_->setToolTip(fitTip);
  bar_->addWidget(fit_);
  body_->addLayout(bar_);
  addWidget(chartPage_);
}

void ChartPages::addControl(QWidget* w) { bar_->insertWidget(bar_->count() - 1, w); }

void ChartPages::showMessage(const QString& text) {
  message_->setText(text);
  setCurrentIndex(0);
}

void ChartPages::showChart(const QString& summary) {
  summary_->setText(summary);
  setCurrentIndex(1);
}

QString ChartPages::message() const { return showsChart() ? QString() : message_->text(); }
QString ChartPages::summary() const { return showsChart() ? summary_->text() : QString(); }

}  // namespace kiln::views
