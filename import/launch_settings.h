#pragma once
// The pipeline and schedules of a scenario imported from a launch (Megatron-LM's arguments, a torchtitan job
// file): what the launch says replaces the importer's defaults, and the launch's own schedule (with its
// uneven stages) comes first, with the schedules to compare it against after it.
#include <string>

#include "import/import_scenario.h"
#include "import/megatron_args.h"
#include "import/torchtitan_config.h"

namespace pipesim {

// Stages from --pipeline-model-parallel-size; one data-parallel replica of `data_parallel`: its share of the
// global batch in m = global / (micro x data_parallel) microbatches. Also records the launch's data-parallel
// size in the import's parallel: section (the distributed optimizer shards nothing over one replica).
// InputError when the global batch is not a multiple of micro x data_parallel.
ImportSettings megatron_launch_settings(MegatronImport& launch, int data_parallel, ImportSettings settings);

// Stages, m and the local batch of one pipeline replica, the job's schedule first.
ImportSettings torchtitan_launch_settings(const TorchtitanImport& job, ImportSettings settings);

}  // namespace pipesim
