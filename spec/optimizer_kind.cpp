#include "spec/optimizer_kind.h"

namespace pipesim {

const NameTable<OptimizerKind>& optimizer_names() {
  static const NameTable<OptimizerKind> names = {
      {"sgd", OptimizerKind::kSgd},   {"adamw", OptimizerKind::kAdamW}, {"nadam", OptimizerKind::kNAdam},
      {"muon", OptimizerKind::kMuon}, {"lion", OptimizerKind::kLion},   {"adan", OptimizerKind::kAdan},
      {"soap", OptimizerKind::kSoap}};
  return names;
}

std::string optimizer_name(OptimizerKind kind) {
  return name_in(optimizer_names(), kind);
}

}  // namespace pipesim
