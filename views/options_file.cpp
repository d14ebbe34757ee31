#include "options_file.h"

#include <QSaveFile>

namespace kiln::views {

QString fusionSwitchText(const Json& normalised) {
  QStringList items;
  if (normalised.isObject())
    for (const auto& [rule, on] : normalised.asObject())
      items << QString::fromStdString(rule) + (on.isBool() && on.asBool() ? ":on" : ":off");
  return items.join(';');
}

Json changedFromDefaults(const Options& o) {
  const Options defaults;
  Json out = Json::object();
  for (const auto& s : Options::schema())
    if (!(o.get(s.key) == defaults.get(s.key))) out.set(s.key, o.get(s.key));
  return out;
}

QString writeOptionsFile(const Options& o, const QString& path) {
  // QSaveFile writes a temporary and renames it on commit, so a failed save never leaves half a file behind.
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return "cannot write " + path + ": " + f.errorString();
  const std::string text = changedFromDefaults(o).dump(2) + "\n";
  f.write(text.data(), static_cast<qint64>(text.size()));
  if (!f.commit()) return "cannot write " + path + ": " + f.errorString();
  return {};
}

}  // namespace kiln::views
