#include "ir/shape_binding.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "ir/graph.h"

namespace kiln {
namespace {

constexpr int64_t kMaxExtent = int64_t{1} << 40;

std::vector<std::string> nameTokens(const std::string& symbol) {
  std::vector<std::string> tokens;
  std::string cur;
  for (char c : symbol) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!cur.empty()) {
      tokens.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) tokens.push_back(cur);
  return tokens;
}

bool hasToken(const std::vector<std::string>& tokens, std::initializer_list<const char*> words) {
  for (const std::string& t : tokens)
    for (const char* w : words)
      if (t == w) return true;
  return false;
}

// The role a symbol's name says, if it says one. Names exporters write: batch_size, batch, N, bs; seq_len,
// sequence_length, max_seq_len_in_batch, encoder_sequence_length, time, frames, num_tokens, samples;
// past_sequence_length, past_seq_len, past_decoder_sequence_length; total_sequence_length, total_seq_len;
// height, width. Checked in this order: "max_seq_len_in_batch" is a sequence, "past_seq_len" a past.
std::optional<DimRole> roleFromName(const std::string& symbol) {
  std::string lower;
  for (char c : symbol) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::vector<std::string> tokens = nameTokens(symbol);
  if (lower.find("past") != std::string::npos) return DimRole::PastSequence;
  if (lower.find("total") != std::string::npos) return DimRole::TotalSequence;
  if (lower.find("audio") != std::string::npos || lower.find("wav") != std::string::npos ||
      hasToken(tokens, {"samples", "sample", "signal", "pcm"}))
    return DimRole::Audio;
  if (lower.find("seq") != std::string::npos ||
      hasToken(tokens, {"len", "length", "time", "times", "frames", "frame", "steps", "step", "tokens", "token",
                        "context", "ctx", "src", "tgt", "text"}))
    return DimRole::Sequence;
  if (lower.find("batch") != std::string::npos || hasToken(tokens, {"n", "b", "bs", "bsz"}))
    return DimRole::Batch;
  if (lower.find("height") != std::string::npos || lower.find("width") != std::string::npos ||
      hasToken(tokens, {"h", "w", "img", "image"}))
    return DimRole::Image;
  return std::nullopt;
}

// An input holding a KV cache: past_0, past_key_values.0.key, cache_k...
bool kvCacheInput(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("past") != std::string::npos || lower.find("cache") != std::string::npos;
}

int64_t parseExtent(const std::string& digits, const std::string& what) {
  if (digits.empty() || digits.size() > 14 || !std::all_of(digits.begin(), digits.end(), ::isdigit))
    throw std::invalid_argument(what + ": '" + digits + "' is not a whole number");
  const int64_t v = std::stoll(digits);
  if (v < 1 || v > kMaxExtent) throw std::invalid_argument(what + ": " + digits + " is outside 1 .. 2^40");
  return v;
}

}  // namespace

const char* dimRoleName(DimRole role) {
  switch (role) {
    case DimRole::Batch: return "batch";
    case DimRole::Sequence: return "sequence";
    case DimRole::PastSequence: return "past_sequence";
    case DimRole::TotalSequence: return "total_sequence";
    case DimRole::Image: return "image";
    case DimRole::Audio: return "audio";
    case DimRole::Other: return "other";
  }
  return "other";
}

std::optional<DimRole> dimRoleFromName(const std::string& name) {
  for (DimRole r : {DimRole::Batch, DimRole::Sequence, DimRole::PastSequence, DimRole::TotalSequence, DimRole::Image,
                    DimRole::Audio, DimRole::Other})
    if (name == dimRoleName(r)) return r;
  return std::nullopt;
}

DimPolicy DimPolicy::parse(const std::string& text) {
  DimPolicy p;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(';', start), text.size());
    std::string item = text.substr(start, end - start);
    start = end + 1;
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("dim_policy: '" + item + "' is not role:value");
    const std::string role = item.substr(0, colon);
    if (role == "decode_sequence") {
      p.decodeSequence = parseExtent(item.substr(colon + 1), "dim_policy: " + role);
      continue;
    }
    const auto r = dimRoleFromName(role);
    if (!r || *r == DimRole::TotalSequence)
      throw std::invalid_argument("dim_policy: unknown role '" + role +
                                  "' (batch, sequence, past_sequence, decode_sequence, image, audio, other; total_sequence "
                                  "is always past_sequence + sequence)");
    p.set(*r, parseExtent(item.substr(colon + 1), "dim_policy: " + role));
  }
  return p;
}

std::string DimPolicy::text() const {
  return "batch:" + std::to_string(batch) + ";sequence:" + std::to_string(sequence) +
         ";past_sequence:" + std::to_string(pastSequence) + ";decode_sequence:" + std::to_string(decodeSequence) +
         ";image:" + std::to_string(image) + ";audio:" + std::to_string(audio) +
         ";other:" + std::to_string(other);
}

int64_t DimPolicy::valueFor(DimRole role) const {
  switch (role) {
    case DimRole::Batch: return batch;
    case DimRole::Sequence: return sequence;
    case DimRole::PastSequence: return pastSequence;
    case DimRole::TotalSequence: return pastSequence + sequence;
    case DimRole::Image: return image;
    case DimRole::Audio: return audio;
    case DimRole::Other: return other;
  }
  return other;
}

void DimPolicy::set(DimRole role, int64_t value) {
  switch (role) {
    case DimRole::Batch: batch = value; return;
    case DimRole::Sequence: sequence = value; return;
    case DimRole::PastSequence: pastSequence = value; return;
    case DimRole::Image: image = value; return;
    case DimRole::Audio: audio = value; return;
    case DimRole::Other: other = value; return;
    case DimRole::TotalSequence: break;
  }
  throw std::invalid_argument("dim_policy: total_sequence is past_sequence + sequence; set those instead");
}

DimRole classifySymbol(const std::string& symbol, const Shape& shape, size_t axis, bool floatInput, bool* fromName) {
  if (auto r = roleFromName(symbol)) {
    if (fromName) *fromName = true;
    // A "sequence" of floats with no feature axis is a waveform (Silero VAD's [batch, sequence]): token sequences
    // are integer ids, embedded sequences have a hidden axis.
    if (*r == DimRole::Sequence && axis == 1 && shape.rank() == 2 && floatInput) return DimRole::Audio;
    return *r;
  }
  if (fromName) *fromName = false;
  const size_t rank = shape.rank();
  if (axis == 0 && rank >= 2) return DimRole::Batch;
  // An image: NCHW before two spatial axes, or NHWC when only the last axis is a small static channel count.
  if (rank == 4 && floatInput) {
    const auto small = [](const Dim& d) { return d.isStatic() && d.value <= 4; };
    const bool nhwc = small(shape[3]) && !small(shape[1]);
    if (nhwc ? (axis == 1 || axis == 2) : (axis == 2 || axis == 3)) return DimRole::Image;
  }
  if (axis == 1 && rank == 2 && floatInput) return DimRole::Audio;  // [batch, samples] of raw audio
  if (axis == 1 && (rank == 2 || rank == 3)) return DimRole::Sequence;
  return DimRole::Other;
}

std::vector<SymbolSite> inputSymbols(const Graph& g) {
  std::vector<SymbolSite> sites;
  std::set<std::string> seen;
  for (const Value* v : g.inputs()) {
    if (v->constant() || !v->type().isTensor() || !v->type().shape.rankKnown()) continue;
    const Shape& s = v->type().shape;
    for (size_t a = 0; a < s.rank(); ++a) {
      if (!s[a].isSymbolic() || !seen.insert(s[a].symbol).second) continue;
      SymbolSite site{s[a].symbol, v->name(), a, DimRole::Other, false};
      site.role = classifySymbol(s[a].symbol, s, a, isFloating(v->type().dtype), &site.roleFromName);
      if ((site.role == DimRole::Sequence || site.role == DimRole::Other) && kvCacheInput(v->name())) {
        site.role = DimRole::PastSequence;  // gpt2's past_0 [2, batch, heads, seq_len, head]: seq_len is the past
        site.roleFromName = false;
      }
      sites.push_back(std::move(site));
    }
  }
  return sites;
}

std::map<std::string, int64_t> ShapeBinding::values() const {
  std::map<std::string, int64_t> m;
  for (const BoundSymbol& b : bound) m[b.symbol] = b.value;
  return m;
}

const BoundSymbol* ShapeBinding::find(const std::string& symbol) const {
  for (const BoundSymbol& b : bound)
    if (b.symbol == symbol) return &b;
  return nullptr;
}

std::optional<int64_t> ShapeBinding::valueOf(const std::string& symbol) const {
  if (const BoundSymbol* b = find(symbol)) return b->value;
  return std::nullopt;
}

std::string ShapeBinding::text() const {
  std::string t;
  for (const BoundSymbol& b : bound)
    t += (t.empty() ? "" : ", ") + b.symbol + "=" + std::to_string(b.value) + " (" + b.source + ")";
  for (const std::string& k : kept) t += (t.empty() ? "" : ", ") + k + " kept symbolic (dim_values=keep)";
  return t;
}

std::string ShapeBinding::shortText() const {
  std::string t;
  for (const BoundSymbol& b : bound) t += (t.empty() ? "" : ", ") + b.symbol + "=" + std::to_string(b.value);
  return t;
}

std::string ShapeBinding::hint() const {
  if (bound.empty()) return {};
  std::string shown, example;
  size_t n = 0;
  for (const BoundSymbol& b : bound) {
    if (n++ == 4) {
      shown += ", ...";
      break;
    }
    shown += (shown.empty() ? "" : ", ") + b.symbol + "=" + std::to_string(b.value) + " (" + b.source + ")";
  }
  // The example names the largest extent, whoever chose it: the likeliest to be past a table of the model.
  const BoundSymbol* pick = &bound.front();
  for (const BoundSymbol& b : bound)
    if (b.value > pick->value) pick = &b;
  return "symbols bound as " + shown + "; other extents: --set dim_values=" + pick->symbol +
         ":N (kiln run: --dim " + pick->symbol + "=N)";
}

Json ShapeBinding::toJson() const {
  Json symbols = Json::array();
  for (const BoundSymbol& b : bound) {
    Json e = Json::object();
    e.set("symbol", Json(b.symbol));
    e.set("value", Json(b.value));
    e.set("source", Json(b.source));
    symbols.push(std::move(e));
  }
  Json keptJson = Json::array();
  for (const std::string& k : kept) keptJson.push(Json(k));
  Json j = Json::object();
  j.set("symbols", std::move(symbols));
  j.set("kept", std::move(keptJson));
  return j;
}

ShapeBinding ShapeBinding::fromJson(const Json& j) {
  ShapeBinding b;
  if (!j.isObject()) return b;
  if (const Json* s = j.find("symbols"); s && s->isArray())
    for (const Json& e : s->asArray()) {
      if (!e.isObject()) continue;
      const Json* sym = e.find("symbol");
      const Json* val = e.find("value");
      const Json* src = e.find("source");
      if (!sym || !sym->isString() || !val || !val->isInt()) continue;
      b.bound.push_back({sym->asString(), val->asInt(), src && src->isString() ? src->asString() : ""});
    }
  if (const Json* k = j.find("kept"); k && k->isArray())
    for (const Json& e : k->asArray())
      if (e.isString()) b.kept.push_back(e.asString());
  return b;
}

ShapeBinding resolveShapeBinding(const Graph& g, const BindingRequest& request) {
  ShapeBinding out;
  std::map<std::string, std::pair<int64_t, std::string>> fixed;  // symbol -> (extent, source)
  const auto bindFixed = [&](const std::string& symbol, int64_t v, const std::string& source) {
    auto [it, fresh] = fixed.emplace(symbol, std::make_pair(v, source));
    if (!fresh && it->second.first != v)
      throw std::invalid_argument(source + " binds '" + symbol + "' to " + std::to_string(v) + " but " +
                                  it->second.second + " binds it to " + std::to_string(it->second.first));
  };
  // 1. input_shape, input by input.
  for (const auto& [name, dims] : request.inputShapes) {
    const Value* in = nullptr;
    for (const Value* v : g.inputs())
      if (v->name() == name) in = v;
    if (!in) throw std::invalid_argument("input_shape names '" + name + "', which is not a graph input");
    if (!in->type().isTensor()) throw std::invalid_argument("input_shape: input '" + name + "' is not a tensor");
    const Shape& s = in->type().shape;
    if (s.rankKnown() && s.rank() != dims.size())
      throw std::invalid_argument("input_shape gives '" + name + "' rank " + std::to_string(dims.size()) +
                                  " but the model declares rank " + std::to_string(s.rank()) + " (" + s.toString() +
                                  ")");
    std::vector<Dim> kept;
    for (size_t i = 0; i < dims.size(); ++i) {
      const Dim old = s.rankKnown() ? s[i] : Dim::unknown();
      if (!dims[i].isStatic()) {
        kept.push_back(Dim::unknown());
        continue;
      }
      if (old.isStatic() && old.value != dims[i].value)
        throw std::invalid_argument("input_shape gives '" + name + "' dimension " + std::to_string(i) + " = " +
                                    std::to_string(dims[i].value) + " but the model fixes it to " +
                                    std::to_string(old.value) + " (" + s.toString() + ")");
      if (old.isSymbolic()) bindFixed(old.symbol, dims[i].value, "input_shape");
      kept.push_back(dims[i]);
    }
    out.inputShapes[name] = std::move(kept);
  }
  // 2. dim_values, by symbol name, else by role name ("sequence" binds every sequence symbol, as --sweep does).
  // Names that are neither are listed in `ignored` (one option set serves many models: not an error here).
  const std::vector<SymbolSite> sites = inputSymbols(g);
  std::set<std::string> symbols;
  g.forEachGraph([&](const Graph& sg) {
    for (const Value* v : sg.values())
      if (v->type().isTensor() && v->type().shape.rankKnown())
        for (const Dim& d : v->type().shape.dims())
          if (d.isSymbolic()) symbols.insert(d.symbol);
  });
  for (const auto& [name, v] : request.dimValues) {
    const std::string source = request.dimValueSources.count(name) ? request.dimValueSources.at(name) : "dim_values";
    if (symbols.count(name)) {
      bindFixed(name, v, source);
      continue;
    }
    const std::optional<DimRole> role = dimRoleFromName(name);
    bool used = false;
    if (role && *role != DimRole::Other && *role != DimRole::TotalSequence)
      for (const SymbolSite& s : sites)
        if (s.role == *role && !request.dimValues.count(s.symbol)) {
          bindFixed(s.symbol, v, source + " (role " + name + ")");
          used = true;
        }
    if (!used) out.ignored.push_back(name);
  }

  // 3. The policy, over the inputs' symbols in order of first appearance.
  const bool kvCache = std::any_of(sites.begin(), sites.end(),
                                   [](const SymbolSite& s) { return s.role == DimRole::PastSequence; });
  // A decode step: a KV-cache model's (non-encoder) sequence symbols take decode_sequence.
  const auto decodes = [&](const SymbolSite& s) {
    std::string lower;
    for (char c : s.symbol) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return kvCache && s.role == DimRole::Sequence && lower.find("encoder") == std::string::npos;
  };
  const auto boundOfRole = [&](DimRole role) -> int64_t {
    // The extent the model's own symbol of that role got, when it has exactly one such symbol bound before the
    // policy; else the policy's value. A total follows the past and sequence the user chose.
    std::optional<int64_t> found;
    int count = 0;
    for (const SymbolSite& s : sites)
      if (s.role == role) {
        ++count;
        if (auto it = fixed.find(s.symbol); it != fixed.end()) found = it->second.first;
      }
    if (count == 1 && found) return *found;
    if (role == DimRole::Sequence && kvCache) return request.policy.decodeSequence;
    return request.policy.valueFor(role);
  };
  for (const SymbolSite& s : sites) {
    if (auto it = fixed.find(s.symbol); it != fixed.end()) {
      out.bound.push_back({s.symbol, it->second.first, it->second.second});
      continue;
    }
    if (request.keep) {
      out.kept.push_back(s.symbol);
      continue;
    }
    const std::string how = s.roleFromName ? "" : " by position";
    if (decodes(s)) {
      out.bound.push_back({s.symbol, request.policy.decodeSequence,
                           "dim_policy: decode_sequence (a decode step: the model has a KV cache)"});
      continue;
    }
    if (s.role == DimRole::TotalSequence) {
      const int64_t past = boundOfRole(DimRole::PastSequence), seq = boundOfRole(DimRole::Sequence);
      out.bound.push_back({s.symbol, past + seq, "dim_policy: total_sequence = past " + std::to_string(past) +
                                                     " + sequence " + std::to_string(seq)});
      continue;
    }
    out.bound.push_back({s.symbol, request.policy.valueFor(s.role), std::string("dim_policy: ") +
                                                                         dimRoleName(s.role) + how});
  }
  return out;
}

BindingApplied applyShapeBinding(Graph& g, const ShapeBinding& binding) {
  BindingApplied out;
  const std::map<std::string, int64_t> symbols = binding.values();
  // input_shape's static positions on inputs that were unknown (not symbolic) there.
  for (Value* in : g.inputs()) {
    auto it = binding.inputShapes.find(in->name());
    if (it == binding.inputShapes.end()) continue;
    ValueType t = in->type();
    std::vector<Dim> dims = t.shape.rankKnown() ? t.shape.dims() : std::vector<Dim>(it->second.size());
    for (size_t i = 0; i < dims.size() && i < it->second.size(); ++i)
      if (it->second[i].isStatic()) dims[i] = it->second[i];
    t.shape = Shape(dims);
    if (!(t == in->type())) {
      in->setType(t);
      ++out.inputs;
    }
  }
  if (symbols.empty()) return out;
  // The same symbol elsewhere is the same extent.
  g.forEachGraph([&](Graph& sg) {
    for (Value* v : sg.values()) {
      if (!v->type().isTensor() || !v->type().shape.rankKnown()) continue;
      ValueType t = v->type();
      bool changed = false;
      for (Dim& d : t.shape.dims()) {
        if (!d.isSymbolic()) continue;
        if (auto e = evaluateSymbol(d.symbol, symbols)) {
          d = Dim::fixed(*e);
          changed = true;
        }
      }
      if (changed) {
        v->setType(t);
        ++out.dims;
      }
    }
  });
  return out;
}

std::optional<int64_t> evaluateSymbol(const std::string& symbol, const std::map<std::string, int64_t>& values) {
  if (auto it = values.find(symbol); it != values.end()) return it->second;
  // Terms separated by + and -; a term is an integer or a bound symbol.
  int64_t sum = 0;
  int sign = 1;
  size_t i = 0, terms = 0;
  bool sawOperator = false;
  while (i < symbol.size()) {
    const char c = symbol[i];
    if (c == ' ') {
      ++i;
      continue;
    }
    if (c == '+' || c == '-') {
      sign = c == '-' ? -1 : 1;
      sawOperator = true;
      ++i;
      continue;
    }
    size_t j = i;
    while (j < symbol.size() && symbol[j] != '+' && symbol[j] != '-' && symbol[j] != ' ') ++j;
    const std::string term = symbol.substr(i, j - i);
    i = j;
    int64_t v = 0;
    if (std::all_of(term.begin(), term.end(), ::isdigit) && term.size() <= 12) {
      v = std::stoll(term);
    } else if (auto it = values.find(term); it != values.end()) {
      v = it->second;
    } else {
      return std::nullopt;
    }
    sum += sign * v;
    sign = 1;
    ++terms;
  }
  if (!sawOperator || terms < 2 || sum < 0) return std::nullopt;
  return sum;
}

}  // namespace kiln
