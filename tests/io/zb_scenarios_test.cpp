// The shipped Zero Bubble scenarios (share/scenarios/zb/) against the paper's reference tables
// (io/zb_reference.h): the activation memory each states for its model.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "io/scenario.h"
#include "io/zb_reference.h"
#include "pipesim_source_dir.h"

namespace pipesim {
namespace {

// Every shipped Zero Bubble scenario states the paper's activation memory for its model (Table 1 of the
// paper, 16-bit, per layer: M_B = s b (34h + 5as), M_W = 32 s b h) times the k = (layers + 2) / N layers of a
// middle stage (the stage whose times were profiled), with the model's microbatch size b.
TEST(ZbScenarios, ShippedMemoryIsThePapersFormula) {
  const std::vector<ZbModel> models = load_zb_models(default_reference_data_dir());
  int checked = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/zb")) {
    const std::string file = entry.path().filename().string();
    SCOPED_TRACE(file);
    const Scenario scenario = load_scenario(entry.path().string());
    const ZbModel& model = find_zb_model(models, file.substr(0, file.find('-')));
    ASSERT_EQ(scenario.stages, model.stages);
    ASSERT_EQ((model.model.layers + 2) % model.stages, 0);
    const long k = (model.model.layers + 2) / model.stages;
    const long s = model.model.seq_len, b = model.microbatch_size, h = model.model.hidden,
               a = model.model.heads;
    EXPECT_EQ(scenario.microbatch_size, b);
    for (int d = 0; d < scenario.stages; ++d) {
      EXPECT_EQ(scenario.costs.activation_bytes[d], k * s * b * (34 * h + 5 * a * s));
      EXPECT_EQ(scenario.costs.weight_grad_activation_bytes[d], k * 32 * s * b * h);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 12);
}

}  // namespace
}  // namespace pipesim
