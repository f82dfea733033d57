#include "io/layer_times.h"

#include <fmt/format.h>

#include "base/errors.h"
#include "cost_models/transformer/stage_costs.h"
#include "io/csv_table.h"

namespace pipesim {
namespace {

template <typename Enum>
Enum parse_choice(const CsvTable& table, size_t row, const std::string& column,
                  const NameTable<Enum>& names) {
  const std::string& text = table.text(row, column);
  for (const auto& [name, value] : names) {
    if (name == text) return value;
  }
  throw InputError(fmt::format("{}:{}: column '{}': expected one of {}, got '{}'", table.path(),
                               table.line(row), column, fmt::join(names_of(names), ", "), text));
}

double positive_ms(const CsvTable& table, size_t row, const std::string& column) {
  const double value = table.number(row, column);
  if (!(value > 0)) {
    throw InputError(fmt::format("{}:{}: column '{}': expected a time above 0 ms, got {}", table.path(),
                                 table.line(row), column, value));
  }
  return value;
}

int positive_integer(const CsvTable& table, size_t row, const std::string& column) {
  const int value = table.integer(row, column);
  if (value < 1) {
    throw InputError(fmt::format("{}:{}: column '{}': expected an integer of at least 1, got {}",
                                 table.path(), table.line(row), column, value));
  }
  return value;
}

}  // namespace

LayerTimesFile load_layer_times(const std::string& path) {
  const CsvTable table(path, "measured layer times");
  LayerTimesFile file;
  file.path = path;
  file.provenance = table.comments();
  for (size_t i = 0; i < table.size(); ++i) {
    MeasuredLayerTimes row;
    row.config = table.text(i, "config");
    row.line = table.line(i);
    TransformerModel& m = row.model;
    m.layers = 1;
    m.hidden = positive_integer(table, i, "hidden");
    m.heads = positive_integer(table, i, "heads");
    m.kv_heads = positive_integer(table, i, "kv_heads");
    m.ffn_hidden = positive_integer(table, i, "ffn");
    m.seq_len = positive_integer(table, i, "seq");
    m.mlp = parse_choice(table, i, "mlp", mlp_names());
    m.recompute = parse_choice(table, i, "recompute", recompute_names());
    if (m.hidden % m.heads != 0 || m.heads % m.kv_heads != 0) {
      throw InputError(fmt::format("{}:{}: hidden {} must divide into heads {}, and heads into kv_heads {}",
                                   path, row.line, m.hidden, m.heads, m.kv_heads));
    }
    row.attention = table.text(i, "attention");
    // torch_layer_times.py runs scaled_dot_product_attention on the flash backend only.
    m.attention = row.attention.rfind("flash", 0) == 0 ? AttentionKind::kFlash : AttentionKind::kEager;
    row.norm = table.text(i, "norm");
    row.micro_batch = positive_integer(table, i, "micro_batch");
    row.forward_ms = positive_ms(table, i, "F_ms");
    row.backward_ms = positive_ms(table, i, "B_ms");
    row.backward_input_ms = positive_ms(table, i, "I_ms");
    row.backward_weight_ms = positive_ms(table, i, "W_ms");
    if (row.backward_input_ms >= row.backward_ms) {
      throw InputError(
          fmt::format("{}:{}: I_ms {} is not below B_ms {}: the backward for the input alone cannot "
                      "take as long as the whole backward",
                      path, row.line, row.backward_input_ms, row.backward_ms));
    }
    file.rows.push_back(row);
  }
  return file;
}

std::vector<LayerTimesComparison> compare_layer_times(const HardwareProfile& profile,
                                                      const std::vector<MeasuredLayerTimes>& measured) {
  std::vector<LayerTimesComparison> rows;
  for (const MeasuredLayerTimes& m : measured) {
    // Three stages of one layer each: the middle one holds the layer alone.
    TransformerSetup setup;
    setup.model = m.model;
    setup.model.layers = 3;
    setup.model.vocab = 1;
    setup.profile = profile;
    const std::vector<StageCosts> stages = transformer_stage_costs(setup, m.micro_batch, 3);
    const StageCosts& middle = stages.at(1);
    LayerTimesComparison row;
    row.measured = m;
    row.forward_ms = middle.forward_s * 1e3;
    row.backward_input_ms = middle.backward_input_s * 1e3;
    row.backward_weight_ms = middle.backward_weight_s * 1e3;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace pipesim
