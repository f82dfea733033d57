#include "io/zb_reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "base/errors.h"
#include "cost_models/transformer/stage_costs.h"
#include "io/csv_table.h"
#include "io/data_dirs.h"

namespace pipesim {

std::string default_reference_data_dir() {
  return find_data_path("data/zero_bubble", "the Zero Bubble reference data");
}

template <typename Row, typename MakeRow>
std::vector<Row> read_rows(const std::string& path, MakeRow make_row) {
  const CsvTable table(path, "the Zero Bubble reference data");
  std::vector<Row> rows;
  for (size_t i = 0; i < table.size(); ++i) rows.push_back(make_row(table, i));
  return rows;
}

std::vector<ZbModel> load_zb_models(const std::string& data_dir) {
  return read_rows<ZbModel>(data_dir + "/zb_models.csv", [](const CsvTable& table, size_t i) {
    ZbModel m;
    m.name = table.text(i, "model");
    m.model.layers = table.integer(i, "layers");
    m.model.heads = table.integer(i, "heads");
    m.model.hidden = table.integer(i, "hidden");
    m.model.seq_len = table.integer(i, "seq_len");
    m.model.vocab = table.integer(i, "vocab");
    // The paper's Megatron-LM GPT: no flash attention, dropout on (its M_B = s·b(34h + 5as)).
    m.model.attention = AttentionKind::kEager;
    m.model.dropout = true;
    m.stages = table.integer(i, "stages");
    m.microbatch_size = table.integer(i, "microbatch_size");
    m.microbatches = table.integers(i, "microbatches");
    return m;
  });
}

std::vector<ZbProfiledTimes> load_zb_profiled_times(const std::string& data_dir) {
  return read_rows<ZbProfiledTimes>(data_dir + "/zb_profiled_times.csv", [](const CsvTable& t, size_t i) {
    return ZbProfiledTimes{
        t.text(i, "model"),        t.integer(i, "stages"),           t.integer(i, "microbatches"),
        t.number(i, "forward_ms"), t.number(i, "backward_input_ms"), t.number(i, "backward_weight_ms"),
        t.number(i, "comm_ms")};
  });
}

std::vector<ZbMeasured> load_zb_measured(const std::string& data_dir) {
  return read_rows<ZbMeasured>(data_dir + "/zb_measured.csv", [](const CsvTable& t, size_t i) {
    return ZbMeasured{t.text(i, "model"),
                      t.integer(i, "stages"),
                      t.integer(i, "microbatch_size"),
                      t.integer(i, "microbatches"),
                      t.number(i, "throughput_1f1b"),
                      t.number(i, "throughput_zb2p"),
                      t.number(i, "memory_gb_1f1b"),
                      t.number(i, "memory_gb_zb2p")};
  });
}

const ZbModel& find_zb_model(const std::vector<ZbModel>& models, const std::string& name) {
  for (const ZbModel& m : models) {
    if (m.name == name) return m;
  }
  throw InputError(fmt::format("model '{}' is not in zb_models.csv", name));
}

std::vector<FitRow> a100_fit_rows(const HardwareProfile& profile, const std::string& data_dir) {
  const std::vector<ZbModel> models = load_zb_models(data_dir);
  std::vector<FitRow> rows;
  for (const ZbProfiledTimes& p : load_zb_profiled_times(data_dir)) {
    const ZbModel& m = find_zb_model(models, p.model);
    TransformerSetup setup{m.model, profile, LayerSplit::kZeroBubble, {}, {}, {}, {}};
    const std::vector<StageCosts> stages = transformer_stage_costs(setup, m.microbatch_size, p.stages);
    FitRow row;
    row.profiled = p;
    row.stage = p.stages > 2 ? 1 : 0;  // a middle stage: all its layers, no embedding or loss
    const StageCosts& c = stages[row.stage];
    row.layers = c.layers;
    row.forward_ms = c.forward_s * 1e3;
    row.backward_input_ms = c.backward_input_s * 1e3;
    row.backward_weight_ms = c.backward_weight_s * 1e3;
    row.comm_ms = c.transfer_s * 1e3;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace pipesim
