#include "inspector.h"

#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "layout/ge_node_facts.h"
#include "util/json.h"
#include "util/units.h"

namespace kiln::views {

namespace {

constexpr int kNodeRole = Qt::UserRole + 1;
constexpr int kFusedRole = Qt::UserRole + 2;  // the fused node a row expands
constexpr int kPassRole = Qt::UserRole + 3;   // with kFusedRole: an "absorbed into" row, the pass to go to

QString q(const std::string& s) { return QString::fromStdString(s); }

QString bytesText(int64_t b) { return QString::fromStdString(formatBytes(double(b))); }

QString jsonText(const Json& j) {
  if (j.isString()) return q(j.asString());
  return q(j.dump());
}

QTreeWidgetItem* row(QTreeWidgetItem* parent, const QString& k, const QString& v) {
  auto* item = new QTreeWidgetItem(parent, {k, v});
  item->setToolTip(1, v);
  return item;
}

QString tensorText(const ValueRow& v) {
  QString t = q(v.dtype) + "  " + q(v.shape.value_or("?"));
  if (!v.format.empty()) t += "  " + q(v.format);
  if (v.bytes) t += "  " + bytesText(*v.bytes);
  if (v.isConstant) t += "  (constant)";
  return t;
}

}  // namespace

Inspector::Inspector(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  title_ = new QLabel("Select a node", this);
  title_->setWordWrap(true);
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont f = title_->font();
  f.setBold(true);
  title_->setFont(f);
  tree_ = new QTreeWidget(this);
  tree_->setColumnCount(2);
  tree_->setHeaderLabels({"", ""});
  tree_->setHeaderHidden(true);
  // Keys are short ("op", "0", "HBM saved"); long names live in the value column, which takes the rest.
  tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  tree_->header()->setStretchLastSection(true);
  tree_->setAlternatingRowColors(true);
  layout->addWidget(title_);
  layout->addWidget(tree_, 1);
  connect(tree_, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* item) {
    const QVariant node = item->data(0, kNodeRole), fused = item->data(0, kFusedRole);
    if (fused.isValid() && item->data(0, kPassRole).isValid())
      emit absorberActivated(fused.toLongLong(), item->data(0, kPassRole).toInt());
    else if (fused.isValid())
      emit fusionExpandRequested(fused.toLongLong(), node.isValid() ? node.toLongLong() : 0);
    else if (node.isValid())
      emit nodeLinkActivated(node.toLongLong());
  });
}

void Inspector::setFusions(std::shared_ptr<const layout::FusionIndex> fusions) { fusions_ = std::move(fusions); }

void Inspector::setNodeTiming(std::unordered_map<int64_t, layout::NodeTiming> timing) { timing_ = std::move(timing); }

void Inspector::clear() {
  title_->setText("Select a node");
  tree_->clear();
}

void Inspector::showNode(const layout::PassView& view, int64_t nodeId) {
  tree_->clear();
  const layout::PassViewNode* n = view.node(nodeId);
  if (!n) {
    clear();
    return;
  }
  const bool removed = n->state == layout::NodeState::Removed;
  const GraphSnapshot& snap = removed ? view.before : view.after;
  if (n->kind != layout::PassViewNode::Kind::Op) {
    const ValueRow* v = snap.value(layout::terminalValue(n->id));
    title_->setText((n->kind == layout::PassViewNode::Kind::Input ? "Graph input " : "Graph output ") + q(n->name));
    if (v) row(tree_->invisibleRootItem(), "tensor", tensorText(*v));
    return;
  }
  const NodeRow* r = snap.node(nodeId);
  if (!r) {
    clear();
    return;
  }
  title_->setText(q(r->opType) + "  " + q(r->name) + (removed ? "  (removed by this pass)" : ""));
  QTreeWidgetItem* root = tree_->invisibleRootItem();
  row(root, "op", r->domain.empty() ? q(r->opType) : q(r->domain + ":" + r->opType));
  row(root, "name", q(r->name));
  row(root, "id", QString::number(r->id));
  if (n->state == layout::NodeState::Added) row(root, "diff", "added by this pass");
  if (n->state == layout::NodeState::Changed) {
    QStringList ch;
    for (const auto& c : n->changes) ch << q(c);
    row(root, "diff", "changed: " + ch.join(", "));
  }
  // Annotations: engine/unit first, the fusion record next, everything else after.
  try {
    const Json ann = Json::parse(r->annotationsJson.empty() ? "{}" : r->annotationsJson);
    if (ann.isObject()) {
      for (const char* key : {"engine", "unit"})
        if (const Json* v = ann.find(key)) row(root, key, jsonText(*v));
      if (const Json* rule = ann.find("fusion.rule")) {
        auto* fusion = row(root, "fused by", jsonText(*rule) + "   (double-click: what it replaced)");
        fusion->setData(0, kFusedRole, static_cast<qlonglong>(nodeId));
        if (const Json* saved = ann.find("fusion.hbm_bytes_saved"))
          row(fusion, "HBM saved", bytesText(std::atoll(jsonText(*saved).toUtf8().constData())) +
                                       (ann.find("fusion.hbm_unknown_tensors")
                                            ? " + " + jsonText(*ann.find("fusion.hbm_unknown_tensors")) +
                                                  " tensors of dynamic size"
                                            : QString()));
        if (const Json* rep = ann.find("fusion.replaced")) {
          const QStringList ids = jsonText(*rep).split(',', Qt::SkipEmptyParts);
          auto* replaced = row(fusion, "replaced", QString("%1 nodes").arg(ids.size()));
          replaced->setData(0, kFusedRole, static_cast<qlonglong>(nodeId));
          for (const QString& id : ids) {
            auto* item = row(replaced, "node", id);
            item->setData(0, kNodeRole, id.toLongLong());
            item->setData(0, kFusedRole, static_cast<qlonglong>(nodeId));
          }
        }
        fusion->setExpanded(true);
      }
      for (const auto& [k, v] : ann.asObject()) {
        if (k == "engine" || k == "unit" || k.rfind("fusion.", 0) == 0) continue;
        row(root, q(k), jsonText(v));
      }
    }
  } catch (const std::exception&) {
    row(root, "annotations", q(r->annotationsJson));
  }
  // Its kernels' time: simulated, and measured beside it when the run has a profile.
  if (auto it = timing_.find(nodeId); it != timing_.end() && (it->second.us > 0 || it->second.measuredTasks > 0)) {
    const layout::NodeTiming& t = it->second;
    const double simulated = t.us + t.dispatchUs;  // as msprof's Task Duration counts the scheduling
    QString text = t.us > 0 ? QString("simulated %1 µs").arg(simulated, 0, 'f', 2) : QString("not simulated");
    if (t.us > 0 && t.dispatchUs > 0) text += QString(" (%1 µs dispatch)").arg(t.dispatchUs, 0, 'f', 2);
    if (t.measuredTasks > 0) {
      const double perTask = t.measuredUs / t.measuredTasks;
      text += QString(" · measured %1 µs per task (%L2 tasks)").arg(perTask, 0, 'f', 2).arg(t.measuredTasks);
      if (t.us > 0 && perTask > 0) text += QString(" · simulated / measured %1×").arg(simulated / perTask, 0, 'f', 2);
    }
    row(root, "time", text);
  }
  // Where this node went: every fusion holding it, the direct one first.
  if (fusions_)
    for (const layout::FusionRecord* f : fusions_->absorberChain(nodeId)) {
      auto* item = row(root, "absorbed into",
                       QString("%1 %2 (#%3) by %4 at pass %5")
                           .arg(q(f->opType), q(f->name))
                           .arg(f->fusedNode)
                           .arg(q(f->rule))
                           .arg(f->pass));
      item->setToolTip(1, "Double-click to go to pass " + QString::number(f->pass) + " and select the fused node");
      item->setData(0, kFusedRole, static_cast<qlonglong>(f->fusedNode));
      item->setData(0, kPassRole, f->pass);
    }
  // What GE recorded about the op (a GE dump, an .om), by name: what it absorbed, its kernel, engine and stream.
  try {
    const Json attrs = Json::parse(r->attrsJson.empty() ? "{}" : r->attrsJson);
    const Json ann = Json::parse(r->annotationsJson.empty() ? "{}" : r->annotationsJson);
    const std::vector<layout::NodeFact> facts = layout::geNodeFacts(attrs, ann);
    if (!facts.empty()) {
      auto* ge = row(root, "GE", "what GE recorded");
      for (const layout::NodeFact& f : facts) row(ge, q(f.label), q(f.text));
      ge->setExpanded(true);
    }
  } catch (const std::exception&) {
  }
  try {
    const Json attrs = Json::parse(r->attrsJson.empty() ? "{}" : r->attrsJson);
    if (attrs.isObject() && !attrs.asObject().empty()) {
      auto* a = row(root, "attributes", QString::number(attrs.asObject().size()));
      for (const auto& [k, v] : attrs.asObject()) row(a, q(k), jsonText(v));
      a->setExpanded(true);
    }
  } catch (const std::exception&) {
    row(root, "attributes", q(r->attrsJson));
  }
  // Inputs in slot order, outputs by producer index.
  auto* ins = row(root, "inputs", "");
  for (const EdgeRow& e : snap.edges) {
    if (e.consumerNode != nodeId) continue;
    const ValueRow* v = snap.value(e.valueId);
    if (!v) continue;
    auto* item = row(ins, QString::number(e.consumerIndex), q(v->name) + "  ·  " + tensorText(*v));
    if (v->producerNode) item->setData(0, kNodeRole, static_cast<qlonglong>(*v->producerNode));
  }
  ins->setExpanded(true);
  auto* outs = row(root, "outputs", "");
  for (const ValueRow& v : snap.values)
    if (v.producerNode && *v.producerNode == nodeId)
      row(outs, QString::number(v.producerIndex.value_or(0)), q(v.name) + "  ·  " + tensorText(v));
  outs->setExpanded(true);
}

QString Inspector::text() const {
  QStringList lines;
  lines << title_->text();
  std::function<void(QTreeWidgetItem*)> walk = [&](QTreeWidgetItem* it) {
    for (int i = 0; i < it->childCount(); ++i) {
      lines << it->child(i)->text(0) + "\t" + it->child(i)->text(1);
      walk(it->child(i));
    }
  };
  walk(tree_->invisibleRootItem());
  return lines.join("\n");
}

}  // namespace kiln::views
