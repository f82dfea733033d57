#include "plan/plan_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

#include "cost_models/transformer/shapes_flops.h"
#include "report/csv.h"
#include "report/format.h"
#include "report/model_choices.h"

namespace pipesim {
namespace {

std::string gib(double bytes) {
  return fmt::format("{:.1f}", bytes / kBytesPerGiB);
}

// Context parallelism is a column only when some configuration shown uses it. `capacity_bytes`: the usable
// memory per GPU, which the memory margin is measured under.
std::vector<std::string> table_row(size_t rank, const PlanRow& r, bool context_column, bool expert_column,
                                   double capacity_bytes) {
  const PlanCandidate& c = r.candidate;
  // One column for rank and schedule: the first column is always left-aligned, and a name such as
  // 1f1b-flush elsewhere would line up as a number.
  std::vector<std::string> row = {fmt::format("{}. {}", rank, r.label), std::to_string(c.tensor)};
  if (context_column) row.push_back(std::to_string(c.context));
  row.push_back(std::to_string(c.pipeline));
  row.push_back(std::to_string(c.data));
  if (expert_column) row.push_back(std::to_string(c.expert));
  const std::vector<std::string> rest = {std::to_string(c.microbatch_size),
                                         std::to_string(c.microbatches),
                                         recompute_name(c.recompute),
                                         std::to_string(c.zero),
                                         fmt::format("{:.3f}", r.step_s),
                                         fmt::format("{:.0f}", r.tokens_per_gpu_s),
                                         fmt::format("{:.1f}", r.tflops_per_gpu),
                                         r.mfu > 0 ? fmt::format("{:.1f}", 100 * r.mfu) : "",
                                         gib(r.peak_bytes),
                                         gib(capacity_bytes - r.peak_bytes),
                                         fmt::format("{:.1f}", 100 * r.idle_fraction)};
  row.insert(row.end(), rest.begin(), rest.end());
  return row;
}

std::vector<std::string> table_header(bool context_column, bool expert_column) {
  std::vector<std::string> header = {"# schedule",  "t",         "p",       "d",        "b",
                                     "m",           "recompute", "ZeRO",    "step s",   "tokens/s/GPU",
                                     "TFLOP/s/GPU", "MFU %",     "GiB/GPU", "GiB left", "idle %"};
  if (expert_column) header.insert(header.begin() + 4, "e");
  if (context_column) header.insert(header.begin() + 2, "c");
  return header;
}

std::string ranked_table(const PlanResult& result, const std::vector<size_t>& indices) {
  const bool context_column = std::any_of(indices.begin(), indices.end(),
                                          [&](size_t i) { return result.rows[i].candidate.context > 1; });
  const bool expert_column = std::any_of(indices.begin(), indices.end(),
                                         [&](size_t i) { return result.rows[i].candidate.expert > 1; });
  std::vector<std::vector<std::string>> rows;
  for (size_t k = 0; k < indices.size(); ++k) {
    rows.push_back(
        table_row(k + 1, result.rows[indices[k]], context_column, expert_column, result.capacity_bytes));
  }
  return render_table(table_header(context_column, expert_column), rows);
}

// "2 failed to simulate ..." on a line of its own when simulations stopped.
std::string failed_text(const PlanResult& result) {
  const size_t failed = result.count(CandidateFate::kFailed);
  if (failed == 0) return "";
  for (const PlanRow& r : result.rows) {
    if (r.fate == CandidateFate::kFailed) {
      constexpr size_t kMaxReason = 160;
      const std::string reason =
          r.reason.size() > kMaxReason ? r.reason.substr(0, kMaxReason - 3) + "..." : r.reason;
      return fmt::format("{} failed to simulate (each with its reason in --csv); the first, {} {}: {}\n",
                         failed, r.label, candidate_shape_text(r.candidate), reason);
    }
  }
  return "";
}

// A line saying how many candidates split their layers evenly because the scenario's layer_split list names
// another number of stages than theirs; "" when the list fit them all (or there is none).
std::string layer_split_note(const TransformerSetup& setup, const PlanResult& result) {
  std::set<int> degrees;
  size_t count = 0;
  for (const PlanRow& r : result.rows) {
    if (!r.candidate.even_split) continue;
    ++count;
    degrees.insert(r.candidate.pipeline);
  }
  if (count == 0) return "";
  return fmt::format(
      "note: pipeline.layer_split {} names {} stages; {} of the {} configurations (pipeline degrees {}) have "
      "another number of stages per model copy and split the layers evenly instead\n",
      layer_split_text(setup), setup.stage_layers.size(), count, result.rows.size(),
      fmt::join(degrees, ", "));
}

// The model's choices without its recomputation, which each row states.
std::string model_text(const TransformerModel& model) {
  std::vector<std::string> parts;
  const std::string text = model_choices_text(model);
  for (size_t begin = 0; begin <= text.size();) {
    const size_t end = std::min(text.find(", ", begin), text.size());
    const std::string part = text.substr(begin, end - begin);
    if (part.rfind("recomputation: ", 0) != 0) parts.push_back(part);
    begin = end + 2;
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::string runner_up_text(const PlanRow& best, const PlanRow& runner_up) {
  const PlanCandidate& a = best.candidate;
  const PlanCandidate& b = runner_up.candidate;
  std::vector<std::string> differs;
  if (best.label != runner_up.label)
    differs.push_back(fmt::format("schedule {} (best: {})", runner_up.label, best.label));
  auto compare = [&](const char* name, auto x, auto y) {
    if (x != y) differs.push_back(fmt::format("{} {} (best: {})", name, y, x));
  };
  compare("t", a.tensor, b.tensor);
  compare("c", a.context, b.context);
  compare("p", a.pipeline, b.pipeline);
  compare("d", a.data, b.data);
  compare("e", a.expert, b.expert);
  compare("b", a.microbatch_size, b.microbatch_size);
  compare("m", a.microbatches, b.microbatches);
  compare("recompute", recompute_name(a.recompute), recompute_name(b.recompute));
  compare("ZeRO", a.zero, b.zero);
  const double slower = 1 - runner_up.tokens_per_gpu_s / best.tokens_per_gpu_s;
  const double work = runner_up.busiest_work_s / best.busiest_work_s - 1;
  std::string text = fmt::format(
      "The runner-up ({}, {}) gives {:.2f} % fewer tokens/s/GPU: its busiest GPU works {:.3f} s a step "
      "against "
      "{:.3f} s ({:+.1f} %) and is idle {:.1f} % of its step against {:.1f} % (a step is that work over one "
      "less the idle share). It differs in {}.",
      runner_up.label, candidate_shape_text(b), 100 * slower, runner_up.busiest_work_s, best.busiest_work_s,
      100 * work, 100 * runner_up.idle_fraction, 100 * best.idle_fraction,
      differs.empty() ? std::string("nothing but its costs") : fmt::format("{}", fmt::join(differs, ", ")));
  return text;
}

std::string format_plan(const Scenario& scenario, const PlanOptions& options, const PlanResult& result) {
  const TransformerSetup& setup = *scenario.transformer;
  // Prose wraps at the report's width (tables keep their rows whole).
  const auto paragraph = [](const std::string& text) { return wrap_lines(text, kReportColumns, 0) + "\n"; };
  std::string out = paragraph(fmt::format(
      "plan: {} ({:.1f} B parameters{}, {} layers) on {} GPUs ({} per node), global batch {} samples of {} "
      "tokens; hardware profile {} ({}), {:.2f} GiB usable per GPU",
      scenario.name, model_parameters(setup.model) / 1e9,
      setup.model.moe.any() ? fmt::format(", {:.1f} B active", active_parameters(setup.model) / 1e9) : "",
      setup.model.layers, result.gpus, setup.parallel.gpus_per_node, result.global_batch, setup.model.seq_len,
      setup.profile.name, setup.profile.kind_text(), result.capacity_bytes / kBytesPerGiB));
  out +=
      unmodelled_banner(unmodelled_lines(unmodelled_in_force(setup.model.unmodelled, setup.model.seq_len)));
  if (const OpTimeScale& scale = setup.profile.op_time_scale; scale.scaled()) {
    out += fmt::format("op times scaled by a measured run: F x{:.3f}, I x{:.3f}, W x{:.3f} ({})\n",
                       scale.forward, scale.backward_input, scale.backward_weight, scale.source);
  }
  out += paragraph(fmt::format(
      "searched {} configurations in {:.1f} s: {} not runnable (schedule rules, layers per stage), {} over "
      "memory by their bound, {} pruned by their throughput bound, {} simulated, {} reused from a run with "
      "identical costs, {} over memory once simulated",
      result.rows.size(), result.seconds, result.count(CandidateFate::kNotRunnable),
      result.count(CandidateFate::kOverMemoryBound), result.count(CandidateFate::kPrunedByBound),
      result.count(CandidateFate::kSimulated), result.count(CandidateFate::kReused),
      result.count(CandidateFate::kOverMemory)));
  out += wrap_lines(failed_text(result) + layer_split_note(setup, result), kReportColumns, 0) + "\n";
  if (result.best_sync.empty() && result.best_async.empty()) {
    out +=
        "no configuration fits in memory and runs: try more GPUs, a smaller microbatch, recomputation or "
        "ZeRO\n";
  }
  if (!result.best_sync.empty()) {
    out += "Best synchronous configurations (every step sees the weights of the step before):\n";
    out += ranked_table(result, result.best_sync);
    if (result.best_sync.size() > 1) {
      out += '\n';
      out += paragraph(runner_up_text(result.rows[result.best_sync[0]], result.rows[result.best_sync[1]]));
    }
  }
  if (!result.best_async.empty()) {
    out += '\n';
    out += paragraph(
        "Best asynchronous configurations (stale weights: compare their learning before choosing one; "
        "`pipesim run` shows each stage's delay):");
    out += ranked_table(result, result.best_async);
  }
  out += '\n';
  out += paragraph(fmt::format(
      "t: tensor-parallel GPUs per pipeline rank (sequence parallelism {}){}; p: pipeline ranks; d: "
      "data-parallel replicas (ranks numbered tensor innermost, then {}); b: samples per microbatch; m: "
      "microbatches per replica and step; ZeRO: what each stage shards over d (1: optimizer state, 2: and "
      "gradients, 3: and weights). step s: one step of the global batch; tokens/s/GPU and TFLOP/s/GPU: the "
      "job's over its GPUs (model FLOPs, recomputation not counted); GiB/GPU: the simulated peak; GiB left: "
      "the "
      "usable memory (capacity less reserve) above that peak; idle %: the busiest GPU's share of the step "
      "outside its own ops (bubble and waits). Rows differing only in recomputation and ZeRO show the "
      "fastest, "
      "then leanest.",
      options.space.sequence_parallel ? "on with t > 1" : "off",
      std::any_of(result.rows.begin(), result.rows.end(),
                  [](const PlanRow& r) { return r.candidate.context > 1; })
          ? "; c: context-parallel GPUs (ring attention: each holds 1/c of every sequence; gradients reduce "
            "and ZeRO shards over d x c)"
          : std::string(std::any_of(result.rows.begin(), result.rows.end(),
                                    [](const PlanRow& r) { return r.candidate.expert > 1; })
                            ? "; e: expert-parallel GPUs of the d replicas (each holds E/e of a MoE layer's "
                              "routed experts; their gradients reduce and ZeRO shards over d/e)"
                            : ""),
      setup.parallel.pipeline_before_data ? "pipeline, then data" : "data, then pipeline"));
  out += paragraph(fmt::format(
      "Model: {}. {}; tensor-parallel collectives block the compute stream.", model_text(setup.model),
      setup.parallel.overlap_grad_reduce
          ? "Each layer's gradients reduce over d as the stage's last backward makes them; what outlasts it "
            "overlaps the other stages' work before the step's barrier"
          : "The gradient reductions start once every stage has finished its backwards "
            "(parallel.overlap_grad_reduce: false)"));
  return out;
}

std::string plan_csv(const PlanResult& result) {
  std::string out = csv_line({"schedule",
                              "tensor",
                              "context",
                              "pipeline",
                              "data",
                              "expert",
                              "microbatch_size",
                              "microbatches",
                              "recompute",
                              "zero",
                              "synchronous",
                              "fate",
                              "reason",
                              "busiest_work_s",
                              "min_peak_gib",
                              "step_s",
                              "tokens_per_gpu_s",
                              "tflops_per_gpu",
                              "mfu",
                              "peak_gib",
                              "margin_gib",
                              "idle_fraction"});
  for (const PlanRow& r : result.rows) {
    const PlanCandidate& c = r.candidate;
    const bool figures = r.fate == CandidateFate::kSimulated || r.fate == CandidateFate::kReused ||
                         r.fate == CandidateFate::kOverMemory;
    const bool bounded = r.fate != CandidateFate::kNotRunnable;
    auto num = [](bool shown, double value, const char* format) {
      return shown ? fmt::format(fmt::runtime(format), value) : std::string();
    };
    // Labels and reasons hold commas ("paci(accumulation=4,...)", "a, b"): quoted as RFC 4180 says.
    out += csv_escaped_line({r.label,
                             std::to_string(c.tensor),
                             std::to_string(c.context),
                             std::to_string(c.pipeline),
                             std::to_string(c.data),
                             std::to_string(c.expert),
                             std::to_string(c.microbatch_size),
                             std::to_string(c.microbatches),
                             recompute_name(c.recompute),
                             std::to_string(c.zero),
                             r.synchronous ? "true" : "false",
                             fate_name(r.fate),
                             r.reason,
                             num(bounded, r.busiest_work_s, "{:.6g}"),
                             num(bounded, r.min_peak_bytes / kBytesPerGiB, "{:.4g}"),
                             num(figures, r.step_s, "{:.6g}"),
                             num(figures, r.tokens_per_gpu_s, "{:.6g}"),
                             num(figures, r.tflops_per_gpu, "{:.6g}"),
                             num(figures, r.mfu, "{:.4g}"),
                             num(figures, r.peak_bytes / kBytesPerGiB, "{:.4g}"),
                             num(figures, (result.capacity_bytes - r.peak_bytes) / kBytesPerGiB, "{:.4g}"),
                             num(figures, r.idle_fraction, "{:.4g}")});
  }
  return out;
}

}  // namespace pipesim
