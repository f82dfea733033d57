#include "spec/fp8_recipe.h"

namespace pipesim {

const NameTable<Fp8Recipe>& fp8_recipe_names() {
  static const NameTable<Fp8Recipe> names = {{"delayed", Fp8Recipe::kDelayed},
                                             {"tensorwise", Fp8Recipe::kTensorwise},
                                             {"rowwise", Fp8Recipe::kRowwise},
                                             {"blockwise", Fp8Recipe::kBlockwise},
                                             {"mxfp8", Fp8Recipe::kMxfp8}};
  return names;
}

std::string fp8_recipe_name(Fp8Recipe recipe) {
  return recipe == Fp8Recipe::kNone ? "none" : name_in(fp8_recipe_names(), recipe);
}

}  // namespace pipesim
