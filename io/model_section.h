#pragma once
// The transformer part of a scenario: `model:`, `hardware:`, pipeline.layer_split and optimizer.type /
// optimizer.state_bytes_per_param. Those keys describe a TransformerSetup; without `model:` they are errors.
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "io/yaml_reader.h"
#include "spec/scenario.h"
#include "spec/transformer_model.h"

namespace pipesim {

// Keys of pipeline: and optimizer: that only a transformer scenario may use.
inline constexpr const char* kOptimizerTypeKey = "type";
inline constexpr const char* kOptimizerStateKey = "state_bytes_per_param";
inline constexpr const char* kOptimizerPreconditionKey = "precondition_frequency";

// `root` is the whole scenario; the profile is looked up next to the scenario file, as a path, or by name in
// share/profiles/.
TransformerSetup read_transformer_setup(const YamlReader& r, const YAML::Node& root);
// `even`, `zb`, `balanced` or a list of layers per stage (kExplicit: the list goes to `stage_layers`) at
// `key` (pipeline.layer_split, or a schedule entry's own pipeline:).
LayerSplit read_layer_split(const YamlReader& r, const YAML::Node& node, const std::string& key,
                            std::vector<int>& stage_layers);

// Throws when a transformer-only key appears in a scenario with explicit `costs:`.
void reject_transformer_keys(const YamlReader& r, const YAML::Node& root);

}  // namespace pipesim
