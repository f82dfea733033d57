#pragma once
// The A100 fit (`pipesim costs --fit-a100`) as a table: predicted / profiled per stage.
#include <string>
#include <vector>

#include "io/zb_reference.h"

namespace pipesim {

// The residual table, with the largest |error| of F, I and W at the end.
std::string render_fit_report(const std::vector<FitRow>& rows, const std::string& profile_source);

}  // namespace pipesim
