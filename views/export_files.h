#pragma once
// The workbench's File ▸ Export: the whole graph scene (not just the viewport) as SVG or PNG, and text the engine
// renders (the memory plan as CSV/JSON, the timeline as a Chrome trace) written to a file. Each returns an empty
// string on success, else a message naming the file and the problem.
#include <QString>
#include <string>

class QGraphicsScene;

namespace kiln::views {

// By the file's suffix: .svg (vector, through Qt SVG) or .png (2× resolution while the image stays under 16k
// pixels a side and 200 M pixels, smaller beyond).
QString exportSceneImage(QGraphicsScene& scene, const QString& path);
QString writeTextFile(const QString& path, const std::string& text);

}  // namespace kiln::views
