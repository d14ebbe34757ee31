#pragma once
// Option sets as the options form shows and saves them: fusion_switch as ATC's "Rule:off" text, and files holding
// only the keys that differ from the defaults (short, and still meaningful if a later version changes a default).
#include <QString>

#include "options/options.h"

namespace kiln::views {

// A normalised fusion_switch ({"ConvBiasAddFusion": false, "ALL": true}) as "ConvBiasAddFusion:off;ALL:on".
QString fusionSwitchText(const Json& normalised);
// The keys of `o` whose value differs from the schema default, as one flat object Options::fromFile reads back.
Json changedFromDefaults(const Options& o);
// Writes changedFromDefaults(o) to `path` (all or nothing). Returns the problem, or an empty string.
QString writeOptionsFile(const Options& o, const QString& path);

}  // namespace kiln::views
