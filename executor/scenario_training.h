#pragma once
// The TrainingSetup a scenario's `executor:` section asks for: the data set loaded (from its Debian
// package, or the repository's snippet) and the model sized by it.
#include "executor/training_setup.h"
#include "io/executor_section.h"

namespace pipesim::executor {

inline constexpr int kDefaultContext = 32;

// Keys the section leaves unset keep `defaults`' values. Throws InputError for a GPT on a data set that is
// not text, or a width that the heads do not divide.
TrainingSetup training_setup_for(const ExecutorSection& section, TrainingSetup defaults);

}  // namespace pipesim::executor
