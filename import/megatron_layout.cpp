#include "import/megatron_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "base/errors.h"

namespace pipesim {
namespace {

constexpr size_t kMaxExpandedChars = 1'000'000;

// Reads the count after a '*' at text[at]; advances `at` past its digits.
size_t read_count(const std::string& text, size_t& at, const std::string& layout) {
  const size_t start = at;
  size_t count = 0;
  while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
    count = count * 10 + static_cast<size_t>(text[at] - '0');
    if (count > kMaxExpandedChars) break;
    ++at;
  }
  if (at == start) {
    throw InputError(
        fmt::format("--pipeline-model-parallel-layout '{}': '*' must be followed by a count", layout));
  }
  return count;
}

void append_checked(std::string& out, const std::string& piece, size_t times, const std::string& layout) {
  if (piece.size() * times + out.size() > kMaxExpandedChars) {
    throw InputError(fmt::format("--pipeline-model-parallel-layout '{}': expands to more than {} characters",
                                 layout, kMaxExpandedChars));
  }
  for (size_t i = 0; i < times; ++i) out += piece;
}

}  // namespace

std::string expand_megatron_layout(const std::string& layout) {
  std::string text;
  std::copy_if(layout.begin(), layout.end(), std::back_inserter(text),
               [](char c) { return c != ',' && c != ' '; });
  // Pass 1: "(group)*n"; a group is the characters up to the first ')' (no nesting, as in Megatron).
  std::string grouped;
  for (size_t at = 0; at < text.size();) {
    if (text[at] == ')') {
      throw InputError(fmt::format("--pipeline-model-parallel-layout '{}': ')' without its '('", layout));
    }
    if (text[at] != '(') {
      grouped += text[at++];
      continue;
    }
    const size_t close = text.find(')', at + 1);
    if (close == std::string::npos || close == at + 1) {
      throw InputError(
          fmt::format("--pipeline-model-parallel-layout '{}': '(' without a group and its ')'", layout));
    }
    const std::string group = text.substr(at + 1, close - at - 1);
    if (group.find('(') != std::string::npos) {
      throw InputError(fmt::format("--pipeline-model-parallel-layout '{}': nested parentheses", layout));
    }
    at = close + 1;
    if (at >= text.size() || text[at] != '*') {
      throw InputError(fmt::format("--pipeline-model-parallel-layout '{}': '({})' must be followed by *count",
                                   layout, group));
    }
    ++at;
    append_checked(grouped, group, read_count(text, at, layout), layout);
  }
  // Pass 2: "x*n".
  std::string expanded;
  for (size_t at = 0; at < grouped.size();) {
    const char c = grouped[at++];
    if (c == '*') {
      throw InputError(
          fmt::format("--pipeline-model-parallel-layout '{}': '*' with nothing to repeat", layout));
    }
    if (at < grouped.size() && grouped[at] == '*') {
      ++at;
      append_checked(expanded, std::string(1, c), read_count(grouped, at, layout), layout);
    } else {
      append_checked(expanded, std::string(1, c), 1, layout);
    }
  }
  return expanded;
}

MegatronLayout read_megatron_layout(const std::string& layout, int pipeline_stages, int layers) {
  const std::string expanded = expand_megatron_layout(layout);
  std::vector<std::string> stages{""};
  for (const char c : expanded) {
    if (c == '|') {
      stages.emplace_back();
    } else {
      stages.back() += c;
    }
  }
  const auto where = [&](size_t stage) {
    return fmt::format("--pipeline-model-parallel-layout '{}', virtual stage {} ('{}')", layout, stage,
                       stages[stage]);
  };
  MegatronLayout result;
  int embeddings = 0;
  int losses = 0;
  for (size_t s = 0; s < stages.size(); ++s) {
    int transformer_layers = 0;
    for (size_t i = 0; i < stages[s].size(); ++i) {
      const char c = stages[s][i];
      if (c == 't') {
        ++transformer_layers;
      } else if (c == 'E') {
        if (++embeddings > 1) throw InputError(where(s) + ": a second embedding E (expected exactly one)");
        if (s != 0 || i != 0) {
          throw InputError(where(s) + ": the embedding E must open the first stage (pipesim keeps it there)");
        }
      } else if (c == 'L') {
        if (++losses > 1) throw InputError(where(s) + ": a second loss L (expected exactly one)");
        if (s + 1 != stages.size() || i + 1 != stages[s].size()) {
          throw InputError(where(s) +
                           ": the loss L must close the last stage (pipesim keeps the output layer there)");
        }
      } else if (c == 'm') {
        throw InputError(where(s) + ": multi-token prediction layers (m) are not modelled");
      } else {
        throw InputError(fmt::format(
            "{}: unknown layer '{}' (expected E embedding, t transformer layer, L loss)", where(s), c));
      }
    }
    result.stage_layers.push_back(transformer_layers);
  }
  if (embeddings == 0 || losses == 0) {
    throw InputError(fmt::format("--pipeline-model-parallel-layout '{}': no {} (expected E first and L last)",
                                 layout, embeddings == 0 ? "embedding E" : "loss L"));
  }
  int total = 0;
  for (const int n : result.stage_layers) total += n;
  if (total != layers) {
    throw InputError(
        fmt::format("--pipeline-model-parallel-layout '{}': {} transformer layers t, but --num-layers {}",
                    layout, total, layers));
  }
  const int count = static_cast<int>(stages.size());
  if (pipeline_stages < 1 || count % pipeline_stages != 0) {
    throw InputError(
        fmt::format("--pipeline-model-parallel-layout '{}': {} virtual stages do not divide into "
                    "--pipeline-model-parallel-size {}",
                    layout, count, pipeline_stages));
  }
  result.chunks = count / pipeline_stages;
  return result;
}

}  // namespace pipesim
