#pragma once
// The documents of `pipesim fidelity` (sweeps/fidelity.h): the terminal summary, Markdown (the README's
// fidelity section) and CSV, one row per measured figure.
#include <string>

#include "sweeps/fidelity.h"

namespace pipesim {

// Every figure of every run (measured, predicted, error), then the errors per source and over all, and
// what the errors mean; runs that failed, with why.
std::string fidelity_summary(const Fidelity& f);
// The same as Markdown tables.
std::string fidelity_markdown(const Fidelity& f);
// Exactly these columns: scenario, source, figure, unit, measured, predicted, relative_error, predicted_by,
// profile_kind, reference, failure.
std::string fidelity_csv(const Fidelity& f);

}  // namespace pipesim
