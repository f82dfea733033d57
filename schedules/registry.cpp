#include "schedules/registry.h"

#include <fmt/format.h>

#include <cctype>
#include <utility>

#include "base/did_you_mean.h"
#include "base/errors.h"
#include "schedules/pytorch_csv.h"

namespace pipesim {

// Each schedule file defines one factory.
std::unique_ptr<Schedule> make_gpipe(const ScheduleParams& params);
std::unique_ptr<Schedule> make_one_f_one_b_flush(const ScheduleParams& params);
std::unique_ptr<Schedule> make_one_f_one_b_overlap(const ScheduleParams& params);
std::unique_ptr<Schedule> make_interleaved_one_f_one_b(const ScheduleParams& params);
std::unique_ptr<Schedule> make_looped_bfs(const ScheduleParams& params);
std::unique_ptr<Schedule> make_interleaved_zero_bubble(const ScheduleParams& params);
std::unique_ptr<Schedule> make_zb_h1(const ScheduleParams& params);
std::unique_ptr<Schedule> make_zb_h2(const ScheduleParams& params);
std::unique_ptr<Schedule> make_zb_1p(const ScheduleParams& params);
std::unique_ptr<Schedule> make_zb_2p(const ScheduleParams& params);
std::unique_ptr<Schedule> make_zb_v(const ScheduleParams& params);
std::unique_ptr<Schedule> make_zb_v_greedy(const ScheduleParams& params);
std::unique_ptr<Schedule> make_v_half(const ScheduleParams& params);
std::unique_ptr<Schedule> make_v_min(const ScheduleParams& params);
std::unique_ptr<Schedule> make_dualpipe_v(const ScheduleParams& params);
std::unique_ptr<Schedule> make_dualpipe(const ScheduleParams& params);
std::unique_ptr<Schedule> make_chimera(const ScheduleParams& params);
std::unique_ptr<Schedule> make_pipedream(const ScheduleParams& params);
std::unique_ptr<Schedule> make_async_1f1b(const ScheduleParams& params);
std::unique_ptr<Schedule> make_pipedream_2bw(const ScheduleParams& params);
std::unique_ptr<Schedule> make_wpipe(const ScheduleParams& params);
std::unique_ptr<Schedule> make_paci(const ScheduleParams& params);

const std::vector<ScheduleInfo>& registered_schedules() {
  static const std::vector<ScheduleInfo> schedules = {
      {"gpipe", "all forwards, then all backwards, then the optimizer step (activation memory m)",
       &make_gpipe},
      {"1f1b-flush", "PipeDream-Flush / Megatron: N-i warm-up forwards, then one F and one B in turn, flush",
       &make_one_f_one_b_flush},
      {"1f1b-overlap",
       "Megatron's combined 1F1B: 1F1B with one more warm-up forward, each steady F fused with a B in one "
       "slot "
       "(expert all-to-alls hidden under the other op's compute)",
       &make_one_f_one_b_overlap},
      {"interleaved-1f1b",
       "Megatron virtual pipeline: 'chunks' stages per device; m in equal rounds (a multiple of N, or < 2N)",
       &make_interleaved_one_f_one_b},
      {"looped-bfs",
       "breadth-first: 'chunks' stages per device (loop placement), every microbatch's F of a chunk before "
       "the "
       "next chunk, Bs in reverse; activation memory chunks*m",
       &make_looped_bfs},
      {"interleaved-zb",
       "interleaved 1F1B's rounds with B split into I and W, W of device r delayed by r backwards; 'chunks'",
       &make_interleaved_zero_bubble},
      {"zb-h1", "Zero Bubble handcrafted H1: B split into I and W, W delayed; 1F1B memory", &make_zb_h1},
      {"zb-h2", "Zero Bubble handcrafted H2: extra warm-up forwards, zero bubble once m >= 2N-1",
       &make_zb_h2},
      {"zb-1p",
       "Zero Bubble greedy search (8 flag settings) under N*M_B activations per stage; 'memory_limit'",
       &make_zb_1p},
      {"zb-2p",
       "Zero Bubble greedy search (8 flag settings) under 2N*M_B activations per stage; 'memory_limit'",
       &make_zb_2p},
      {"zb-v",
       "Zero Bubble V: 2 chunks in a V (device r holds stages r and 2N-1-r), B split into I and W; no bubble "
       "for F = I = W once m >= 2N-1, at 1F1B's memory",
       &make_zb_v},
      {"zb-v-greedy",
       "ZB-V planned by the Zero Bubble authors' cost-aware greedy with the run's costs and comm, under "
       "'memory_limit' x 1F1B's activations (default 1)",
       &make_zb_v_greedy},
      {"v-half",
       "V-Half (controllable memory): the V placement with the authors' building block, I and W split; about "
       "half of 1F1B's activations, (N+2)/2 microbatches",
       &make_v_half},
      {"v-min",
       "V-Min (controllable memory): the V placement with the authors' smallest building block, I and W "
       "split; about a third of 1F1B's activations, (N+4)/3 microbatches, for a larger bubble",
       &make_v_min},
      {"dualpipe-v",
       "DeepSeek's DualPipeV: V placement, m >= 2N; in the steady phase each slot overlaps one chunk's F "
       "with "
       "the other's B (fused F&B); some backwards split into I and W",
       &make_dualpipe_v},
      {"dualpipe",
       "DeepSeek's DualPipe: two copies of the model in opposite directions (device r holds stage r of one, "
       "N-1-r of the other), half the microbatches each way; N even, m even >= 2N; fused F&B, split Ws",
       &make_dualpipe},
      {"chimera",
       "Chimera: two copies of the model in opposite directions (bidirectional, as dualpipe), units of N "
       "microbatches merging both pipelines' 1F1B orders, concatenated; N even, m a multiple of N",
       &make_chimera},
      {"pipedream", "async 1F1B, no flush: a step after every backward, weight stashing (N-i+1 versions)",
       &make_pipedream},
      {"async-1f1b", "async 1F1B, no flush, no stashing: backwards read current weights (drift N-i)",
       &make_async_1f1b},
      {"pipedream-2bw", "async 1F1B, one step per m >= N backwards, double-buffered weights (2 versions)",
       &make_pipedream_2bw},
      {"wpipe",
       "WPipe: 2 chunks in a loop, no flush, a step per half per N microbatches (m a multiple of N); the "
       "first half double-buffered one step behind (as 2bw), the second half synchronous",
       &make_wpipe},
      {"paci",
       "one weight copy, a step per 'accumulation' backwards, in-flight limit 'max_in_flight' (N+1-i)",
       &make_paci},
  };
  return schedules;
}

const std::vector<ScheduleAlias>& pytorch_schedule_aliases() {
  static const std::vector<ScheduleAlias> aliases = {
      {"GPipe", "gpipe"},
      {"1F1B", "1f1b-flush"},
      {"Interleaved1F1B", "interleaved-1f1b"},
      {"LoopedBFS", "looped-bfs"},
      {"InterleavedZeroBubble", "interleaved-zb"},
      {"ZBVZeroBubble", "zb-v"},
      {"DualPipeV", "dualpipe-v"},
  };
  return aliases;
}

namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::string canonical_schedule_name(const std::string& name) {
  std::string key = lower(name);
  if (key.rfind("schedule", 0) == 0 && key.size() > 8) key = key.substr(8);
  for (const ScheduleAlias& alias : pytorch_schedule_aliases()) {
    if (lower(alias.pytorch_name) == key) return alias.name;
  }
  return name;
}

std::unique_ptr<Schedule> make_schedule(const std::string& name_as_given, const ScheduleParams& params) {
  const std::string name =
      name_as_given.rfind("csv:", 0) == 0 ? name_as_given : canonical_schedule_name(name_as_given);
  // "csv:PATH": a user's static schedule in PyTorch's CSV format.
  if (name.rfind("csv:", 0) == 0) {
    std::unique_ptr<Schedule> schedule = make_csv_schedule(name.substr(4), params);
    params.check_all_used(name);
    return schedule;
  }
  std::string known;
  std::vector<std::string> names;
  for (const ScheduleInfo& info : registered_schedules()) {
    names.push_back(info.name);
    if (info.name == name) {
      std::unique_ptr<Schedule> schedule = info.make(params);
      params.check_all_used(name);
      return schedule;
    }
    known += (known.empty() ? "" : ", ") + info.name;
  }
  std::string aliases;
  for (const ScheduleAlias& alias : pytorch_schedule_aliases()) {
    aliases += (aliases.empty() ? "" : ", ") + alias.pytorch_name;
  }
  throw InputError(fmt::format(
      "{}: unknown schedule '{}'{}; known schedules: {}, their PyTorch names ({}), or csv:PATH (PyTorch CSV)",
      params.where(), name, did_you_mean(name, names), known, aliases));
}

}  // namespace pipesim
