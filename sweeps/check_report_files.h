#pragma once
// `pipesim check`'s report as files a CI system reads: JSON (format "pipesim-check", version 1) and JUnit
// XML, one test case per schedule, failed when any of its runs broke an invariant.
#include <string>

#include "sweeps/check.h"

namespace pipesim {

std::string check_report_json(const CheckReport& report);
std::string check_report_junit(const CheckReport& report, double seconds);

}  // namespace pipesim
