#include "import/torchtitan_config.h"

namespace pipesim {

// A job file's section.key names. Ignored: the training loop's sections, file locations and what holds for
// all data-parallel ranks together (one pipeline replica is modelled).
const ImportKeyTable& torchtitan_keys() {
  static const ImportKeyTable table(
      "torchtitan job file", "",
      {
          {"model.name", KeyUse::kModel, "the model: torchtitan's llama3 8B, 70B or 405B (or --hf-config)"},
          {"model.flavor", KeyUse::kModel, "the model: torchtitan's llama3 8B, 70B or 405B (or --hf-config)"},
          {"training.seq_len", KeyUse::kModel, "seq_len (default 2048)"},
          {"training.mixed_precision_param", KeyUse::kModel, "dtype"},
          {"activation_checkpoint.mode", KeyUse::kModel, "recompute: none, selective or full"},
          {"activation_checkpoint.selective_ac_option", KeyUse::kModel,
           "recompute: op for op (every k-th layer whole is listed as not supported)"},
          {"model.converters", KeyUse::kUnmodelled, "model.fp8 (float8, mx)"},
          {"training.local_batch_size", KeyUse::kPipeline, "sequences per step and pipeline replica"},
          {"training.batch_size", KeyUse::kPipeline, "sequences per step and pipeline replica"},
          {"parallelism.pipeline_parallel_degree", KeyUse::kPipeline, "stages"},
          {"parallelism.pipeline_parallel_schedule", KeyUse::kPipeline,
           "the schedule (PyTorch's class name)"},
          {"parallelism.pipeline_parallel_layers_per_stage", KeyUse::kPipeline, "stages per rank"},
          {"parallelism.pipeline_parallel_first_stage_less_layers", KeyUse::kPipeline,
           "uneven stages: the job entry's layer_split"},
          {"parallelism.pipeline_parallel_last_stage_less_layers", KeyUse::kPipeline,
           "uneven stages: the job entry's layer_split"},
          {"parallelism.pipeline_parallel_microbatch_size", KeyUse::kPipeline, "m"},
          {"parallelism.pipeline_parallel_microbatches", KeyUse::kPipeline, "m"},
          {"parallelism.tensor_parallel_degree", KeyUse::kJob, "parallel.tensor"},
          {"parallelism.data_parallel_shard_degree", KeyUse::kJob,
           "parallel.data with parallel.zero: 3 (FSDP)"},
          {"parallelism.data_parallel_replicate_degree", KeyUse::kJob, "parallel.data (replicas)"},
          {"parallelism.context_parallel_degree", KeyUse::kJob,
           "parallel.context (ring attention), with parallel.zero: 3"},
          {"parallelism.expert_parallel_degree", KeyUse::kUnsupported,
           "torchtitan's MoE flavors are not read yet (import the model with import hf, set "
           "parallel.expert)"},
          {"parallelism.enable_async_tensor_parallel", KeyUse::kUnsupported,
           "the tensor-parallel all-reduces are modelled blocking the compute stream, not overlapped"},
          {"float8.enable_fsdp_float8_all_gather", KeyUse::kUnsupported, "float8 is not modelled"},
          {"parallelism.pipeline_parallel_schedule_csv", KeyUse::kUnsupported,
           "a CSV schedule: import it with the scenario's csv: entry"},
          {"training.global_batch_size", KeyUse::kIgnored, ""},
          {"model.tokenizer_path", KeyUse::kIgnored, ""},
          {"model.hf_assets_path", KeyUse::kIgnored, ""},
          {"training.steps", KeyUse::kIgnored, ""},
          {"training.max_norm", KeyUse::kIgnored, ""},
          {"training.dataset", KeyUse::kIgnored, ""},
          {"training.dataset_path", KeyUse::kIgnored, ""},
          {"training.gc_freq", KeyUse::kIgnored, ""},
          {"training.seed", KeyUse::kIgnored, ""},
          {"training.deterministic", KeyUse::kIgnored, ""},
          {"training.mixed_precision_reduce", KeyUse::kJob, "parallel.gradient_reduce_dtype"},
          {"training.enable_cpu_offload", KeyUse::kIgnored, ""},
          {"training.warmup_steps", KeyUse::kIgnored, ""},
          {"job.*", KeyUse::kIgnored, "the training loop's settings"},
          {"profiling.*", KeyUse::kIgnored, "the training loop's settings"},
          {"metrics.*", KeyUse::kIgnored, "the training loop's settings"},
          {"optimizer.*", KeyUse::kIgnored, "the training loop's settings"},
          {"lr_scheduler.*", KeyUse::kIgnored, "the training loop's settings"},
          {"checkpoint.*", KeyUse::kIgnored, "the training loop's settings"},
          {"comm.*", KeyUse::kIgnored, "the training loop's settings"},
          {"validation.*", KeyUse::kIgnored, "the training loop's settings"},
          {"experimental.*", KeyUse::kIgnored, "the training loop's settings"},
          {"fault_tolerance.*", KeyUse::kIgnored, "the training loop's settings"},
          {"compile.*", KeyUse::kIgnored, "the training loop's settings"},
          {"memory_estimation.*", KeyUse::kIgnored, "the training loop's settings"},
          {"float8.*", KeyUse::kIgnored, "a converter's settings (model.converters says whether it is used)"},
          {"quantize.*", KeyUse::kIgnored,
           "a converter's settings (model.converters says whether it is used)"},
          {"mx.*", KeyUse::kIgnored, "a converter's settings (model.converters says whether it is used)"},
      });
  return table;
}

}  // namespace pipesim
