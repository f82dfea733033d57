#pragma once
// The optimizers pipesim knows, one enum for the transformer cost model's state and step and for the
// executor's update rule (executor/optim/), with one name table.
#include "base/name_table.h"

namespace pipesim {

enum class OptimizerKind { kSgd, kAdamW, kNAdam, kMuon, kLion, kAdan, kSoap };

const NameTable<OptimizerKind>& optimizer_names();  // sgd, adamw, nadam, muon, lion, adan, soap
std::string optimizer_name(OptimizerKind kind);

}  // namespace pipesim
