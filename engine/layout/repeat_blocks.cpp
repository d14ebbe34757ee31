#include "layout/repeat_blocks.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <unordered_map>

namespace kiln::layout {
namespace {

constexpr size_t kCandidatePeriods = 12;

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

// op type ⊕ the sorted op types of its producers: enough to tell a layer's nodes apart from each other while the
// same node of the next layer signs the same.
std::vector<uint64_t> signatures(const std::vector<SequenceNode>& seq) {
  std::vector<uint64_t> opHash(seq.size());
  std::hash<std::string> hs;
  for (size_t i = 0; i < seq.size(); ++i) opHash[i] = hs(seq[i].opType);
  std::vector<uint64_t> sig(seq.size());
  std::vector<uint64_t> in;
  for (size_t i = 0; i < seq.size(); ++i) {
    in.clear();
    for (int p : seq[i].producers)
      if (p >= 0 && size_t(p) < seq.size()) in.push_back(opHash[size_t(p)]);
    std::sort(in.begin(), in.end());
    uint64_t h = mix(opHash[i], in.size());
    for (uint64_t x : in) h = mix(h, x);
    sig[i] = h;
  }
  return sig;
}

// The distances at which signatures recur, most frequent first: where a period can be.
std::vector<size_t> candidatePeriods(const std::vector<uint64_t>& sig, size_t minPeriod) {
  std::unordered_map<uint64_t, size_t> last;
  std::map<size_t, size_t> votes;
  for (size_t i = 0; i < sig.size(); ++i) {
    auto [it, fresh] = last.try_emplace(sig[i], i);
    if (!fresh) {
      const size_t d = i - it->second;
      if (d >= minPeriod && d <= sig.size() / 2) ++votes[d];
      it->second = i;
    }
  }
  std::vector<std::pair<size_t, size_t>> ranked(votes.begin(), votes.end());
  std::sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  std::vector<size_t> out;
  for (size_t i = 0; i < ranked.size() && out.size() < kCandidatePeriods; ++i) out.push_back(ranked[i].first);
  return out;
}

// The longest stretch [a, b) where sig[i] == sig[i + p] holds but for at most one mismatch in 20 over any p
// consecutive positions: blocks of period p repeat over [a, b + p).
std::pair<size_t, size_t> longestStretch(const std::vector<uint64_t>& sig, size_t p) {
  const size_t n = sig.size();
  if (p >= n) return {0, 0};
  const size_t tolerance = p / 20;
  size_t bestA = 0, bestB = 0, a = 0, mismatches = 0;
  std::vector<char> miss(n - p, 0);
  for (size_t i = 0; i + p < n; ++i) {
    miss[i] = sig[i] != sig[i + p];
    mismatches += size_t(miss[i]);
    if (i >= p && i - p >= a) mismatches -= size_t(miss[i - p]);  // window of the last p positions
    if (miss[i] && mismatches > tolerance) {
      if (i - a > bestB - bestA) bestA = a, bestB = i;
      a = i + 1;
      mismatches = 0;
    }
  }
  if (n - p - a > bestB - bestA) bestA = a, bestB = n - p;
  // A stretch must not start or end on a mismatch.
  while (bestA < bestB && miss[bestA]) ++bestA;
  while (bestB > bestA && miss[bestB - 1]) --bestB;
  return {bestA, bestB};
}

// Values crossing each cut "before position c": a producer at q < c whose last reader is at or after c.
std::vector<int> crossings(const std::vector<SequenceNode>& seq) {
  std::vector<int> lastUse(seq.size(), -1);
  for (size_t i = 0; i < seq.size(); ++i)
    for (int p : seq[i].producers)
      if (p >= 0 && size_t(p) < i) lastUse[size_t(p)] = std::max(lastUse[size_t(p)], int(i));
  std::vector<int> diff(seq.size() + 2, 0);
  for (size_t q = 0; q < seq.size(); ++q)
    if (lastUse[q] > int(q)) {
      ++diff[q + 1];
      --diff[size_t(lastUse[q]) + 1];
    }
  std::vector<int> out(seq.size() + 1, 0);
  int running = 0;
  for (size_t c = 0; c <= seq.size(); ++c) {
    running += diff[c];
    out[c] = running;
  }
  return out;
}

}  // namespace

size_t RepeatRun::blockOf(size_t pos) const {
  return size_t(std::upper_bound(bounds.begin(), bounds.end(), pos) - bounds.begin()) - 1;
}

RepeatRun findRepeat(const std::vector<SequenceNode>& seq, size_t minPeriod, double minCoverage) {
  RepeatRun none;
  if (seq.size() < 2 * minPeriod) return none;
  const std::vector<uint64_t> sig = signatures(seq);
  struct Candidate {
    size_t period, a, b, covered;
  };
  std::vector<Candidate> found;
  size_t most = 0;
  for (size_t p : candidatePeriods(sig, minPeriod)) {
    const auto [a, b] = longestStretch(sig, p);
    if (b <= a || b - a < p) continue;
    const size_t covered = ((b - a) / p + 1) * p;
    found.push_back({p, a, b, covered});
    most = std::max(most, covered);
  }
  // The finest unit that still covers a good part of what the best covers: a layer, not two layers at a time; a
  // residual block, not a run of them (the runs of one stage and the next are found in what is left).
  const Candidate* best = nullptr;
  for (const Candidate& c : found)
    if (c.covered * 100 >= most * 35 && double(c.covered) >= minCoverage * double(seq.size()) &&
        (!best || c.period < best->period))
      best = &c;
  if (!best) return none;
  const size_t bestA = best->a, bestB = best->b, fullCount = (bestB - bestA) / best->period + 1;
  // Where the blocks start: the offset whose cuts carry the fewest values across (one block fewer inside the
  // stretch is no loss: the extension below takes similar blocks at either end).
  const std::vector<int> cross = crossings(seq);
  const size_t p = best->period, slack = (bestB - bestA) % p;
  auto cost = [&](size_t start, size_t count) {
    double total = 0;
    for (size_t j = 0; j <= count; ++j) total += cross[std::min(start + j * p, seq.size())];
    return total / double(count + 1);
  };
  // Ties (a transformer layer's residual crosses between attention and MLP as it does between layers): a layer
  // starts where its attention comes first.
  auto attentionAt = [&](size_t start) {
    for (size_t i = start; i < start + p && i < seq.size(); ++i)
      if (seq[i].opType.find("Softmax") != std::string::npos || seq[i].opType.find("Attention") != std::string::npos)
        return i - start;
    return p;
  };
  // Then a block starts after a branch point: the node before the cut feeds two readers (the residual source: the
  // block's input and its skip connection), not just the next op.
  std::vector<int> readers(seq.size(), 0);
  for (const SequenceNode& n : seq)
    for (int q : n.producers)
      if (q >= 0 && size_t(q) < seq.size()) ++readers[size_t(q)];
  auto branching = [&](size_t start, size_t count) {
    int total = 0;
    for (size_t j = 0; j <= count; ++j)
      if (const size_t c = start + j * p; c > 0 && c <= seq.size()) total += std::min(readers[c - 1], 2);
    return total;
  };
  struct Phase {
    size_t start, count;
    double cost, attention;
    int branching;
  };
  auto phase = [&](size_t start, size_t count) {
    return Phase{start, count, cost(start, count), double(attentionAt(start)), branching(start, count)};
  };
  Phase chosen = phase(bestA, fullCount);
  for (size_t o = 1; o < p && bestA + o + p * (fullCount - 1) <= seq.size(); ++o) {
    const size_t count = o <= slack ? fullCount : fullCount - 1;
    if (count < 2 || bestA + o + p * count > seq.size()) continue;
    const Phase c = phase(bestA + o, count);  // a block lost at an end comes back by the extension below
    const bool better = c.cost < chosen.cost - 0.5 ||
                        (c.cost <= chosen.cost + 0.5 &&
                         (c.attention < chosen.attention ||
                          (c.attention == chosen.attention && c.branching > chosen.branching)));
    if (better) chosen = c;
  }
  const size_t bestStart = chosen.start, bestCount = chosen.count;
  RepeatRun run;
  run.period = p;
  run.typical = bestStart;
  for (size_t j = 0; j <= bestCount; ++j) run.bounds.push_back(bestStart + j * p);
  // Blocks past either end that hold nearly the same ops (a layer with a node more or less, a first layer whose
  // preamble the exporter hoisted, a last one without a residual) still belong to the run: each side takes the
  // length, within a tenth more or a fifth less, whose ops differ least from a typical block's, if at most a fifth
  // of them differ.
  // By op type alone: a first layer reads the embedding where the others read the previous layer.
  std::map<std::string, int> typical;
  for (size_t i = 0; i < p; ++i) ++typical[seq[bestStart + i].opType];
  auto differing = [&](size_t a, size_t n) {
    std::map<std::string, int> count = typical;
    for (size_t i = 0; i < n; ++i) --count[seq[a + i].opType];
    size_t d = 0;
    for (const auto& [k, c] : count) d += size_t(std::abs(c));
    return d;
  };
  // Lengths to try, the typical one first and then by how far they are from it: with ties (ops in a block counted
  // without their order) the typical length wins.
  std::vector<size_t> lengths;
  for (size_t k = 0; k <= p / 5; ++k) {
    if (k <= p / 10 && k) lengths.push_back(p + k);
    lengths.push_back(p - k);
    if (!k) continue;
  }
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  for (bool extended = true; extended;) {  // forwards
    extended = false;
    const size_t e = run.end();
    size_t bestLen = 0, bestDiff = p;
    for (size_t n : lengths)
      if (e + n <= seq.size())
        if (const size_t d = differing(e, n); d < bestDiff) bestDiff = d, bestLen = n;
    if (bestLen && bestDiff * 5 <= p) run.bounds.push_back(e + bestLen), extended = true;
  }
  for (bool extended = true; extended;) {  // backwards
    extended = false;
    const size_t s0 = run.first();
    size_t bestLen = 0, bestDiff = p;
    for (size_t n : lengths)
      if (n <= s0)
        if (const size_t d = differing(s0 - n, n); d < bestDiff) bestDiff = d, bestLen = n;
    if (bestLen && bestDiff * 5 <= p) run.bounds.insert(run.bounds.begin(), s0 - bestLen), extended = true;
  }
  return run;
}

std::vector<size_t> quietCuts(const std::vector<SequenceNode>& seq, size_t target) {
  std::vector<size_t> cuts;
  if (seq.size() <= target || target < 4) return cuts;
  const std::vector<int> cross = crossings(seq);
  size_t from = 0;
  while (seq.size() - from > target + target / 2) {
    const size_t lo = from + target - target / 4, hi = std::min(seq.size() - target / 4, from + target + target / 4);
    size_t best = lo;
    for (size_t c = lo; c <= hi; ++c)
      if (cross[c] < cross[best]) best = c;
    cuts.push_back(best);
    from = best;
  }
  return cuts;
}

BlockDescription describeBlock(const std::vector<std::string>& opTypes) {
  std::map<std::string, int> n;
  for (const std::string& op : opTypes) {
    const size_t colon = op.rfind(':');
    ++n[colon == std::string::npos ? op : op.substr(colon + 1)];
  }
  auto has = [&](std::initializer_list<const char*> ops) {
    int c = 0;
    for (const char* o : ops) c += n.count(o) ? n.at(o) : 0;
    return c;
  };
  BlockDescription d;
  std::vector<std::string> parts;
  d.attention = has({"Softmax", "Attention", "MultiHeadAttention", "GroupQueryAttention", "BiasSoftmax", "SoftmaxDropout"}) > 0;
  const int matmuls = has({"MatMul", "Gemm", "FusedMatMul", "MatMulInteger", "QLinearMatMul"});
  const int activations = has({"Gelu", "FastGelu", "BiasGelu", "Erf", "Relu", "Sigmoid", "Tanh", "Silu", "HardSwish"});
  const int convs = has({"Conv", "FusedConv", "ConvInteger", "QLinearConv", "ConvTranspose"});
  if (d.attention) parts.push_back("Attention");
  if (matmuls >= (d.attention ? 4 : 2) && activations > 0) parts.push_back("MLP");
  if (convs > 0) {
    std::string c = "Conv" + (convs > 1 ? " ×" + std::to_string(convs) : std::string());
    if (has({"Concat"}) && convs >= 3) c += " branches";
    else if (has({"Add", "Sum"})) c += " + residual";
    parts.push_back(c);
  }
  if (has({"LSTM", "GRU", "RNN"})) parts.push_back("recurrent");
  if (parts.empty()) {  // the two most frequent ops
    std::vector<std::pair<int, std::string>> top;
    for (const auto& [op, c] : n) top.push_back({-c, op});
    std::sort(top.begin(), top.end());
    for (size_t i = 0; i < top.size() && i < 2; ++i)
      parts.push_back(top[i].second + (top[i].first < -1 ? " ×" + std::to_string(-top[i].first) : std::string()));
    d.text = parts.empty() ? std::string() : parts[0] + (parts.size() > 1 ? ", " + parts[1] : "");
    return d;
  }
  for (size_t i = 0; i < parts.size(); ++i) d.text += (i ? " + " : "") + parts[i];
  return d;
}

}  // namespace kiln::layout
