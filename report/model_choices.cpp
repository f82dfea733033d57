#include "report/model_choices.h"

#include <fmt/format.h>

#include "cost_models/transformer/parallel_comm.h"
#include "spec/hardware_profile.h"

namespace pipesim {

namespace {

// A mixture of experts as the header states it: its shape, the routed load assumed and what MFU counts.
std::string moe_text(const TransformerModel& t) {
  const MixtureOfExperts& m = t.moe;
  if (!m.any()) return "";
  std::string text =
      fmt::format("; mixture of experts: {} routed experts of f = {}, {} per token", m.experts,
                  m.expert_ffn_hidden > 0 ? m.expert_ffn_hidden : t.ffn(), m.experts_per_token);
  if (m.shared_experts > 0) text += fmt::format(", {} shared", m.shared_experts);
  if (m.dense_layers > 0) text += fmt::format(", the first {} layers dense", m.dense_layers);
  if (m.layer_step > 1) text += fmt::format(", a MoE every {} layers", m.layer_step);
  text += fmt::format(
      ", routed load {:.3g}x the mean on the slowest rank ({}{})", m.routed_load(),
      m.load_imbalance == 1 ? "balanced: model.moe.load_imbalance" : "load_imbalance",
      m.capacity_factor > 0 ? fmt::format(", capacity factor {:.3g}", m.capacity_factor) : ", dropless");
  return text + "; MFU counts the active parameters (the experts a token passes through)";
}

}  // namespace

std::string model_choices_text(const TransformerModel& t) {
  const LatentAttention& mla = t.mla;
  const std::string heads =
      mla.any() ? fmt::format(
                      "multi-head latent attention: key/value latent {}, {}, heads {} + {} rotary wide, "
                      "values {}; naive form, the latents expanded per head",
                      mla.kv_lora_rank,
                      mla.q_lora_rank > 0 ? fmt::format("query latent {}", mla.q_lora_rank)
                                          : std::string("queries from the hidden state"),
                      mla.qk_nope_head_dim, mla.qk_rope_head_dim, mla.v_head_dim)
      : t.key_value_heads() == t.heads
          ? "multi-head attention"
          : fmt::format("{} key/value heads of {}", t.key_value_heads(), t.heads);
  const std::string head_size = !mla.any() && t.head_dim > 0 && t.head_dim * t.heads != t.hidden
                                    ? fmt::format(", heads {} wide", t.head_dim)
                                    : "";
  return fmt::format(
             "{}{} attention ({}{}), {} MLP (f = {}), {}{}recomputation: {}{}",
             t.attention == AttentionKind::kFlash && t.causal ? "causal " : "", attention_name(t.attention),
             heads, head_size, t.mlp == MlpKind::kSwiglu ? "SwiGLU" : "GeLU", t.ffn(),
             t.norm == NormKind::kRmsNorm ? "RMSNorm, " : "", t.dropout ? "dropout, " : "",
             recompute_name(t.recompute) +
                 (t.recompute == Recompute::kOp
                      ? std::string(" (torchtitan's op-level policy: every other matmul of a block and its "
                                    "memory-bound ops rerun in the backward)")
                      : std::string()),
             t.tied_embeddings ? ", tied embeddings" : "") +
         moe_text(t) +
         (t.mtp_layers > 0
              ? fmt::format("; {} multi-token prediction module{} on the last stage (a layer, a 2h -> h "
                            "projection and the output layer each; MFU counts them)",
                            t.mtp_layers, t.mtp_layers == 1 ? "" : "s")
              : "");
}

std::string run_model_choices_text(const TransformerSetup& t, int pipeline_devices, size_t pipeline_nodes) {
  std::string text = model_choices_text(t.model);
  if (t.model.fp8 != Fp8Recipe::kNone) {
    text += fmt::format(
        "; FP8 GEMMs ({} scaling): the layers' weight GEMMs at the profile's FP8 rate ({:.3g}x bf16: {}), "
        "their "
        "casts priced, the FP8 weight copies held; attention, the output layer and the router in {}; "
        "activations stored as in {} (less in practice); MFU against the {} peak",
        fp8_recipe_name(t.model.fp8), t.profile.fp8_gemm.speedup_over_bf16,
        t.profile.fp8_gemm.source.empty() ? "no source" : "fp8_gemm in the profile", t.model.dtype,
        t.model.dtype, t.model.dtype);
  }
  if (const OpTimeScale& scale = t.profile.op_time_scale; scale.scaled()) {
    text += fmt::format("; op times scaled F x{:.3g}, I x{:.3g}, W x{:.3g} ({})", scale.forward,
                        scale.backward_input, scale.backward_weight, scale.source);
  }
  const ParallelConfig& p = t.parallel;
  if (p.any()) {
    text += fmt::format(
        "; job: tensor parallel {}{}{}, data parallel {}{}{}, {} GPUs ({} per node, ranks {}); a device is a "
        "pipeline rank of {} GPU{}: samples/s and tokens/s are one pipeline replica's (the job's: x {}), "
        "memory per GPU, MFU per GPU",
        p.tensor,
        std::string(p.sequence_parallel ? " with sequence parallelism" : "") +
            (p.overlap_tensor_comm && p.tensor > 1 ? " (its collectives overlapped with the weight GEMMs)"
                                                   : ""),
        p.context > 1 ? fmt::format(", context parallel {} (ring attention)", p.context) : "", p.data,
        (p.zero > 0 ? fmt::format(" with ZeRO-{} over {} ranks", p.zero, p.weight_replicas()) : "") +
            (p.gradient_reduce_dtype.empty() || p.weight_replicas() <= 1
                 ? std::string()
                 : fmt::format(" (gradients reduced in {})", p.gradient_reduce_dtype)),
        t.model.moe.any()
            ? fmt::format(
                  "; experts: expert parallel {}, expert tensor parallel {} (each MoE layer's routed "
                  "experts {} per rank over {} ranks, each split over {}; replicated on {}; two "
                  "all-to-alls per layer each way{}{}, hidden only under the other op of a fused "
                  "forward-and-backward "
                  "slot (dualpipe, dualpipe-v, 1f1b-overlap), blocking elsewhere)",
                  p.expert, p.expert_tensor_size(), t.model.moe.experts / p.expert, p.expert,
                  p.expert_tensor_size(), p.expert_weight_replicas(),
                  p.expert > 1
                      ? ""
                      : " (none: one rank holds every expert, so the routed load changes no rank's work)",
                  p.deepep_dispatch ? " by DeepEP (a token once to each other node holding one of its "
                                      "experts, forwarded there over NVLink; routing taken as uniform)"
                                    : "")
            : "",
        p.gpus_per_pipeline_rank() * p.data * pipeline_devices, p.gpus_per_node,
        p.pipeline_before_data ? "tp-pp-dp" : "tp-dp-pp", p.gpus_per_pipeline_rank(),
        p.gpus_per_pipeline_rank() > 1 ? "s" : "", p.data);
  }
  if (p.any() && t.profile.intra_node_collectives) {
    const CollectiveCurve& curve = *t.profile.intra_node_collectives;
    text += fmt::format(
        "; collectives inside a node at NCCL's measured all-reduce bus bandwidth by message size ({} "
        "GPUs{}), "
        "not the link's",
        curve.ranks,
        curve.gather_scatter_share < 1 ? fmt::format("; all-gathers and reduce-scatters at {:.0f} % of it",
                                                     100 * curve.gather_scatter_share)
                                       : "");
  }
  if (p.weight_replicas() > 1 && transformer::weight_replicas_span_nodes(t, pipeline_devices)) {
    const int per_node = transformer::weight_replica_ranks_per_node(t, pipeline_devices);
    const std::string what = p.zero >= 3 ? "gradient reductions and weight gathers" : "gradient reductions";
    text +=
        per_node > 1
            ? fmt::format(
                  "; {} across nodes as NCCL rings them: one ring per NIC, {} GPUs of a "
                  "group per node (x {} the inter-node link, up to the node's link)",
                  what, per_node, per_node)
            : fmt::format("; {} across nodes: one GPU of each group per node, on the inter-node link", what);
  }
  if (pipeline_nodes > 0) {
    text +=
        fmt::format("; pipeline ranks on {} nodes: transfers between them on the profile's inter-node link",
                    pipeline_nodes);
  }
  text += fmt::format("; hardware profile {} ({})", t.profile.name, t.profile.kind_text());
  if (t.profile.memory_capacity_gb > 0) {
    text += fmt::format(", {:.2f} GiB usable per device", t.profile.usable_memory_bytes() / kBytesPerGiB);
  }
  if (t.profile.fit.fitted()) text += ", with its fit to measured times";
  return text;
}

}  // namespace pipesim
