#pragma once
// `pipesim check`'s report: the text it prints, and files a CI system reads: JSON (format "pipesim-check",
// version 1) and JUnit XML, one test case per schedule, failed when any of its runs broke an invariant.
#include <string>

#include "sweeps/check.h"

namespace pipesim {

std::string render_check_report(const CheckReport& report);
// "paci(...) N=4 m=8 a=1 seed=0, stage 1, microbatch 4: Δ = 4 > 3 (the invariant ...)": one line.
std::string counterexample_text(const Violation& violation);
std::string check_report_json(const CheckReport& report);
std::string check_report_junit(const CheckReport& report, double seconds);

}  // namespace pipesim
