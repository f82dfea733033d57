#pragma once
// The executor model's command-line options, shared by `pipesim execute` and `pipesim validate`: each one
// given overrides the scenario's `executor:` key of the same name; those not given leave the scenario's (or
// the executor's defaults) in place.
#include <CLI/CLI.hpp>
#include <type_traits>

#include "cli/validators.h"
#include "io/executor_section.h"

namespace pipesim {

inline void add_executor_flags(CLI::App* cmd, ExecutorSection& f) {
  const auto flag = [cmd](const std::string& name, auto& target, const std::string& help) {
    return cmd->add_option_function<typename std::remove_reference_t<decltype(target)>::value_type>(
        name, [&target](const auto& value) { target = value; }, help);
  };
  flag("--model", f.model, "model: residual_mlp or gpt (executor.model)")
      ->check(CLI::IsMember(executor_model_names()));
  flag("--data", f.data, "data set: teacher, fashion_mnist, austen, fortunes or snippet (executor.data)")
      ->check(CLI::IsMember(executor_data_names()));
  flag("--width", f.width, "model width d; the MLP's hidden width is 4d (executor.width, default 16)")
      ->check(CLI::Range(1, 4096));
  flag("--blocks", f.blocks,
       "residual MLP / transformer blocks, raised until every stage has a unit "
       "(executor.blocks, default 4)")
      ->check(CLI::Range(0, 1024));
  flag("--samples", f.samples, "samples per microbatch (executor.samples, default 4)")
      ->check(CLI::Range(1, 1 << 20));
  flag("--lr", f.learning_rate,
       "SGD learning rate (executor.learning_rate, default 0.05), above 0 and at most 100")
      ->check(finite_range(1e-12, 100));
  flag("--seed", f.seed, "seed of the weights and the data draws (executor.seed, default 1)");
}

}  // namespace pipesim
