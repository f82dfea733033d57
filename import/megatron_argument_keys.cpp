#include "import/megatron_args.h"

namespace pipesim {
namespace {

// Read into the model: section: its shape, attention, MLP, dtype, dropout and recomputation.
void megatron_keys_append_model(std::vector<ImportKey>& keys) {
  const std::initializer_list<ImportKey> group = {
      {"num-layers", KeyUse::kModel, "layers"},
      {"hidden-size", KeyUse::kModel, "hidden"},
      {"num-attention-heads", KeyUse::kModel, "heads"},
      {"kv-channels", KeyUse::kModel, "head_dim (where heads x kv-channels is not hidden)"},
      {"seq-length", KeyUse::kModel, "seq_len (--max-position-embeddings without --seq-length)"},
      {"max-position-embeddings", KeyUse::kModel, "seq_len (--max-position-embeddings without --seq-length)"},
      {"vocab-size", KeyUse::kModel,
       "vocab, padded as Megatron pads it (a fixed-size --tokenizer-type without --vocab-size)"},
      {"tokenizer-type", KeyUse::kModel,
       "vocab, padded as Megatron pads it (a fixed-size --tokenizer-type without --vocab-size)"},
      {"make-vocab-size-divisible-by", KeyUse::kModel,
       "vocab, padded as Megatron pads it (a fixed-size --tokenizer-type without --vocab-size)"},
      {"group-query-attention", KeyUse::kModel, "kv_heads", true},
      {"num-query-groups", KeyUse::kModel, "kv_heads"},
      {"swiglu", KeyUse::kModel, "mlp: swiglu (default gelu)", true},
      {"normalization", KeyUse::kModel, "norm: layernorm or rmsnorm (default LayerNorm)"},
      {"ffn-hidden-size", KeyUse::kModel, "ffn_hidden (default Megatron's 4h, or int(8h/3 / 64) x 64 gated)"},
      {"untie-embeddings-and-output-weights", KeyUse::kModel, "tied_embeddings: false", true},
      {"bf16", KeyUse::kModel, "dtype (default fp32)", true},
      {"fp16", KeyUse::kModel, "dtype (default fp32)", true},
      {"attention-dropout", KeyUse::kModel, "dropout (default 0.1 each)"},
      {"hidden-dropout", KeyUse::kModel, "dropout (default 0.1 each)"},
      {"use-flash-attn", KeyUse::kModel, "attention: flash (the default: fused attention)", true},
      {"recompute-granularity", KeyUse::kModel, "recompute: full or selective"},
      {"recompute-activations", KeyUse::kModel, "recompute: selective", true},
  };
  keys.insert(keys.end(), group);
}

// Read into the pipeline: stages, interleaving, uneven stages and the batch that gives m.
void megatron_keys_append_pipeline(std::vector<ImportKey>& keys) {
  const std::initializer_list<ImportKey> group = {
      {"pipeline-model-parallel-size", KeyUse::kPipeline, "stages"},
      {"micro-batch-size", KeyUse::kPipeline, "sequences per microbatch"},
      {"global-batch-size", KeyUse::kPipeline, "m, with the microbatch size and --data-parallel"},
      {"virtual-pipeline-model-parallel-size", KeyUse::kPipeline, "interleaved chunks"},
      {"num-layers-per-virtual-pipeline-stage", KeyUse::kPipeline, "interleaved chunks"},
      {"pipeline-model-parallel-layout", KeyUse::kPipeline,
       "uneven stages: the Megatron entry's layer_split"},
      {"decoder-first-pipeline-num-layers", KeyUse::kPipeline,
       "uneven stages: the Megatron entry's layer_split"},
      {"decoder-last-pipeline-num-layers", KeyUse::kPipeline,
       "uneven stages: the Megatron entry's layer_split"},
      {"account-for-embedding-in-pipeline-split", KeyUse::kPipeline,
       "uneven stages: the Megatron entry's layer_split", true},
      {"account-for-loss-in-pipeline-split", KeyUse::kPipeline,
       "uneven stages: the Megatron entry's layer_split", true},
  };
  keys.insert(keys.end(), group);
}

// Read into the parallel: section around the pipeline.
void megatron_keys_append_job(std::vector<ImportKey>& keys) {
  const std::initializer_list<ImportKey> group = {
      {"tensor-model-parallel-size", KeyUse::kJob, "parallel.tensor"},
      {"context-parallel-size", KeyUse::kJob, "parallel.context (ring attention)"},
      {"sequence-parallel", KeyUse::kJob, "parallel.sequence_parallel", true},
      {"use-distributed-optimizer", KeyUse::kJob, "parallel.zero: 1", true},
      {"overlap-grad-reduce", KeyUse::kJob, "parallel.overlap_grad_reduce", true},
      {"tp-comm-overlap", KeyUse::kJob, "parallel.overlap_tensor_comm", true},
      {"expert-model-parallel-size", KeyUse::kJob, "parallel.expert"},
      {"expert-tensor-parallel-size", KeyUse::kJob, "parallel.expert_tensor"},
      {"moe-enable-deepep", KeyUse::kJob, "parallel.expert_dispatch: deepep (with the flex dispatcher)",
       true},
      {"moe-token-dispatcher-type", KeyUse::kJob, "alltoall or flex (with --moe-enable-deepep: DeepEP)"},
      {"moe-flex-dispatcher-backend", KeyUse::kJob,
       "deepep or hybridep (with the flex dispatcher): parallel.expert_dispatch: deepep"},
      {"moe-layer-freq", KeyUse::kModel, "1, or dense layers then MoE layers: model.moe.dense_layers"},
  };
  keys.insert(keys.end(), group);
}

// Features the costs do not model yet, read into model keys `run` refuses (model.moe, model.mla, ...).
void megatron_keys_append_unmodelled(std::vector<ImportKey>& keys) {
  const std::initializer_list<ImportKey> group = {
      {"num-experts", KeyUse::kModel, "model.moe.experts"},
      {"moe-router-topk", KeyUse::kModel, "model.moe.experts_per_token"},
      {"moe-ffn-hidden-size", KeyUse::kModel, "model.moe.expert_ffn_hidden"},
      {"moe-shared-expert-intermediate-size", KeyUse::kModel, "model.moe.shared_experts"},
      {"multi-latent-attention", KeyUse::kModel, "model.mla", true},
      {"kv-lora-rank", KeyUse::kModel, "model.mla.kv_lora_rank"},
      {"q-lora-rank", KeyUse::kModel, "model.mla.q_lora_rank"},
      {"qk-head-dim", KeyUse::kModel, "model.mla.qk_nope_head_dim"},
      {"qk-pos-emb-head-dim", KeyUse::kModel, "model.mla.qk_rope_head_dim"},
      {"v-head-dim", KeyUse::kModel, "model.mla.v_head_dim"},
      {"mtp-num-layers", KeyUse::kModel, "model.mtp_layers"},
      {"fp8-format", KeyUse::kModel, "model.fp8 (hybrid and e4m3 cost the same)"},
      {"fp8-recipe", KeyUse::kModel, "model.fp8: delayed (the default), tensorwise, blockwise or mxfp8"},
  };
  keys.insert(keys.end(), group);
}

// Not supported where in force: what the figures do not account for.
void megatron_keys_append_unsupported(std::vector<ImportKey>& keys) {
  const std::initializer_list<ImportKey> group = {
      {"recompute-method", KeyUse::kUnsupported, "pipesim recomputes every layer alike (uniform)"},
      {"recompute-modules", KeyUse::kUnsupported,
       "the modules named recomputed: pipesim recomputes as model.recompute says (selective: the attention "
       "core)"},
      {"squared-relu", KeyUse::kUnsupported, "a squared-ReLU MLP, priced as GELU's", true},
  };
  keys.insert(keys.end(), group);
}

// Ignored flags: fusions, logging, checkpoint loading and implementation choices.
void megatron_keys_append_ignored_flags(std::vector<ImportKey>& keys) {
  const std::initializer_list<ImportKey> group = {
      {"moe-grouped-gemm", KeyUse::kIgnored, "how the experts' GEMMs are batched", true},
      {"rotary-scaling-factor", KeyUse::kIgnored, "RoPE's scaling (YaRN): no figure depends on it"},
      {"mscale", KeyUse::kIgnored, "RoPE's scaling (YaRN): no figure depends on it"},
      {"mscale-all-dim", KeyUse::kIgnored, "RoPE's scaling (YaRN): no figure depends on it"},
      {"manual-gc", KeyUse::kIgnored, "Python's garbage collection", true},
      {"manual-gc-interval", KeyUse::kIgnored, "Python's garbage collection"},
      {"moe-router-pre-softmax", KeyUse::kIgnored, "how the router scores (not what it costs)", true},
      {"moe-router-group-topk", KeyUse::kIgnored,
       "the router's node-limited routing (not modelled: uniform)"},
      {"moe-router-num-groups", KeyUse::kIgnored,
       "the router's node-limited routing (not modelled: uniform)"},
      {"moe-router-topk-scaling-factor", KeyUse::kIgnored, "how the router scores (not what it costs)"},
      {"moe-router-score-function", KeyUse::kIgnored, "how the router scores (not what it costs)"},
      {"moe-router-enable-expert-bias", KeyUse::kIgnored, "how the router balances", true},
      {"moe-router-bias-update-rate", KeyUse::kIgnored, "how the router balances"},
      {"moe-router-dtype", KeyUse::kIgnored, "the router's logits' dtype (its GEMM is h x E: small)"},
      {"moe-permute-fusion", KeyUse::kIgnored, "a fusion of the token permutation", true},
      {"moe-router-force-load-balancing", KeyUse::kIgnored,
       "benchmarks' forced balance: what model.moe.load_imbalance 1 (the default) assumes", true},
      {"mtp-loss-scaling-factor", KeyUse::kIgnored, "the MTP loss's weight (not what it costs)"},
      {"moe-router-load-balancing-type", KeyUse::kIgnored,
       "the router's balancing loss: how balanced routing is, is model.moe.load_imbalance"},
      {"moe-aux-loss-coeff", KeyUse::kIgnored, "the router's balancing loss's weight"},
      {"use-mcore-models", KeyUse::kIgnored, "", true},
      {"overlap-param-gather", KeyUse::kIgnored, "", true},
      {"disable-bias-linear", KeyUse::kIgnored, "", true},
      {"no-masked-softmax-fusion", KeyUse::kIgnored, "", true},
      {"use-rotary-position-embeddings", KeyUse::kIgnored, "", true},
      {"no-position-embedding", KeyUse::kIgnored, "", true},
      {"log-throughput", KeyUse::kIgnored, "", true},
      {"log-params-norm", KeyUse::kIgnored, "", true},
      {"log-num-zeros-in-grad", KeyUse::kIgnored, "", true},
      {"no-gradient-accumulation-fusion", KeyUse::kIgnored, "", true},
      {"qk-layernorm", KeyUse::kIgnored, "", true},
      {"mock-data", KeyUse::kIgnored, "", true},
      {"no-load-optim", KeyUse::kIgnored, "", true},
      {"no-load-rng", KeyUse::kIgnored, "", true},
      {"attention-softmax-in-fp32", KeyUse::kIgnored, "", true},
      {"accumulate-allreduce-grads-in-fp32", KeyUse::kIgnored, "", true},
      {"no-bias-swiglu-fusion", KeyUse::kIgnored, "", true},
      {"no-bias-dropout-fusion", KeyUse::kIgnored, "", true},
      {"no-rope-fusion", KeyUse::kIgnored, "", true},
      {"use-checkpoint-args", KeyUse::kIgnored, "", true},
      {"no-async-tensor-model-parallel-allreduce", KeyUse::kIgnored, "", true},
      {"apply-layernorm-1p", KeyUse::kIgnored, "", true},
      {"use-legacy-models", KeyUse::kIgnored, "", true},
      {"log-timers-to-tensorboard", KeyUse::kIgnored, "", true},
      {"log-validation-ppl-to-tensorboard", KeyUse::kIgnored, "", true},
      {"no-save-optim", KeyUse::kIgnored, "", true},
      {"no-save-rng", KeyUse::kIgnored, "", true},
  };
  keys.insert(keys.end(), group);
}

// Ignored arguments with a value: the optimizer, the data, checkpoints, logging and numerics that change no
// time or byte.
void megatron_keys_append_ignored_values(std::vector<ImportKey>& keys) {
  const std::initializer_list<ImportKey> group = {
      {"lr", KeyUse::kIgnored, ""},
      {"min-lr", KeyUse::kIgnored, ""},
      {"lr-decay-style", KeyUse::kIgnored, ""},
      {"lr-decay-iters", KeyUse::kIgnored, ""},
      {"lr-decay-samples", KeyUse::kIgnored, ""},
      {"lr-warmup-fraction", KeyUse::kIgnored, ""},
      {"lr-warmup-iters", KeyUse::kIgnored, ""},
      {"lr-warmup-samples", KeyUse::kIgnored, ""},
      {"train-iters", KeyUse::kIgnored, ""},
      {"train-samples", KeyUse::kIgnored, ""},
      {"weight-decay", KeyUse::kIgnored, ""},
      {"clip-grad", KeyUse::kIgnored, ""},
      {"adam-beta1", KeyUse::kIgnored, ""},
      {"adam-beta2", KeyUse::kIgnored, ""},
      {"adam-eps", KeyUse::kIgnored, ""},
      {"init-method-std", KeyUse::kIgnored, ""},
      {"data-path", KeyUse::kIgnored, ""},
      {"split", KeyUse::kIgnored, ""},
      {"tokenizer-model", KeyUse::kIgnored, ""},
      {"vocab-file", KeyUse::kIgnored, ""},
      {"merge-file", KeyUse::kIgnored, ""},
      {"save", KeyUse::kIgnored, ""},
      {"load", KeyUse::kIgnored, ""},
      {"save-interval", KeyUse::kIgnored, ""},
      {"eval-interval", KeyUse::kIgnored, ""},
      {"eval-iters", KeyUse::kIgnored, ""},
      {"log-interval", KeyUse::kIgnored, ""},
      {"seed", KeyUse::kIgnored, ""},
      {"distributed-backend", KeyUse::kIgnored, ""},
      {"norm-epsilon", KeyUse::kIgnored, ""},
      {"rotary-base", KeyUse::kIgnored, ""},
      {"position-embedding-type", KeyUse::kIgnored, ""},
      {"tensorboard-dir", KeyUse::kIgnored, ""},
      {"wandb-project", KeyUse::kIgnored, ""},
      {"wandb-exp-name", KeyUse::kIgnored, ""},
      {"transformer-impl", KeyUse::kIgnored, ""},
      {"attention-backend", KeyUse::kIgnored, ""},
      {"data-cache-path", KeyUse::kIgnored, ""},
      {"num-workers", KeyUse::kIgnored, ""},
      {"exit-interval", KeyUse::kIgnored, ""},
      {"timing-log-level", KeyUse::kIgnored, ""},
      {"ckpt-format", KeyUse::kIgnored, ""},
      {"rotary-percent", KeyUse::kIgnored, ""},
      {"empty-unused-memory-level", KeyUse::kIgnored, ""},
      {"recompute-num-layers", KeyUse::kIgnored, ""},
  };
  keys.insert(keys.end(), group);
}

}  // namespace

// pretrain_gpt.py's arguments, without their leading --, group by group in the order `--keys` and
// docs/import-keys.md list them.
const ImportKeyTable& megatron_argument_keys() {
  static const ImportKeyTable table = [] {
    std::vector<ImportKey> keys;
    megatron_keys_append_model(keys);
    megatron_keys_append_pipeline(keys);
    megatron_keys_append_job(keys);
    megatron_keys_append_unmodelled(keys);
    megatron_keys_append_unsupported(keys);
    megatron_keys_append_ignored_flags(keys);
    megatron_keys_append_ignored_values(keys);
    return ImportKeyTable("Megatron-LM argument", "--", std::move(keys));
  }();
  return table;
}

}  // namespace pipesim
