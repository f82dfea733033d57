#pragma once
// The Zero Bubble paper's published figures (share/data/zero_bubble/zb_*.csv): its four models, the per-stage
// times it profiled on A100s, and the throughput and memory it measured. pipesim's predictions are put beside
// them.
#include <map>
#include <string>
#include <vector>

#include "spec/transformer_model.h"

namespace pipesim {

struct ZbModel {
  std::string name;  // 1.5B, 6.2B, 14.6B, 28.3B
  TransformerModel model;
  int stages = 0;
  int microbatch_size = 0;
  std::vector<int> microbatches;
};

struct ZbProfiledTimes {
  std::string model;
  int stages = 0;
  int microbatches = 0;
  double forward_ms = 0, backward_input_ms = 0, backward_weight_ms = 0, comm_ms = 0;
};

struct ZbMeasured {
  std::string model;
  int stages = 0, microbatch_size = 0, microbatches = 0;
  double throughput_1f1b = 0, throughput_zb2p = 0;  // samples per GPU per second
  double memory_gb_1f1b = 0, memory_gb_zb2p = 0;
};

// data/zero_bubble on the data search path (io/data_dirs.h; share/data/zero_bubble in the source tree).
std::string default_reference_data_dir();

// Each throws InputError naming the file, line and column for a malformed row.
std::vector<ZbModel> load_zb_models(const std::string& data_dir);
std::vector<ZbProfiledTimes> load_zb_profiled_times(const std::string& data_dir);
std::vector<ZbMeasured> load_zb_measured(const std::string& data_dir);

const ZbModel& find_zb_model(const std::vector<ZbModel>& models, const std::string& name);

// One row of the A100 fit: a middle stage of the model (k layers, no embedding or loss) predicted with the
// profile, next to the profiled times.
struct FitRow {
  ZbProfiledTimes profiled;
  int stage = 0;  // 0-based stage compared
  int layers = 0;
  double forward_ms = 0, backward_input_ms = 0, backward_weight_ms = 0, comm_ms = 0;
  double forward_error() const { return forward_ms / profiled.forward_ms - 1; }
  double backward_input_error() const { return backward_input_ms / profiled.backward_input_ms - 1; }
  double backward_weight_error() const { return backward_weight_ms / profiled.backward_weight_ms - 1; }
  double comm_error() const { return comm_ms / profiled.comm_ms - 1; }
};

std::vector<FitRow> a100_fit_rows(const HardwareProfile& profile, const std::string& data_dir);

}  // namespace pipesim
