#include "schedules/zbv_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <string>

#include "base/errors.h"

namespace pipesim {
namespace {

constexpr int kF = 0;
constexpr int kI = 1;
constexpr int kW = 2;

// The reference orders each device's backwards by when they run: its "chunk 0" of I and W is leg 1 (the
// V's second half, whose gradient comes first), "chunk 1" is leg 0. The builder keeps that numbering
// (`slot` below) so that it reads like the reference; legs are only for costs and stages.
int leg_of(int kind, int slot) {
  return kind == kF ? slot : 1 - slot;
}

// A put the reference's assertions reject.
struct Infeasible {
  std::string why;
};

class Builder {
 public:
  Builder(const ZbvProblem& problem, const ZbvFlags& flags, const std::vector<TimeNs>* allowance)
      : p_(problem),
        flags_(flags),
        n_(static_cast<int>(problem.devices.size())),
        m_(problem.microbatches),
        count_(n_, std::vector<int>(6, 0)),
        end_ns_(static_cast<size_t>(6) * n_ * m_, -1),
        free_ns_(n_, 0),
        memory_(n_, 0),
        bubble_ns_(n_, 0),
        pending_w_(n_),
        order_(n_) {
    if (allowance != nullptr) {
      allowance_ = *allowance;
    } else {
      allowance_.assign(n_, -1);
    }
    max_allowance_ = *std::max_element(allowance_.begin(), allowance_.end());
  }

  void run() {
    warm_up();
    // The reference runs 2m rounds. With uneven costs an op may not be ready in its round (the reference
    // fails its check there); it waits, and rounds go on until every F and I is placed.
    const long all_forwards_and_input_grads = 4L * n_ * m_;
    for (int round = 0; placed_forwards_and_input_grads_ < all_forwards_and_input_grads || round < 2 * m_;
         ++round) {
      const long before = placed_forwards_and_input_grads_;
      input_grad_round();
      forward_round();
      if (round >= 2 * m_ && placed_forwards_and_input_grads_ == before) {
        throw Infeasible{"the rounds stopped placing ops (no F or I of any device is ready)"};
      }
    }
    for (int d = 0; d < n_; ++d) {
      while (!pending_w_[d].empty()) put_w(d);
    }
  }

  TimeNs max_bubble_ns() const { return max_stage_bubble(-1); }
  const std::vector<TimeNs>& bubbles_ns() const { return bubble_ns_; }

  DeviceActionLists lists() const {
    DeviceActionLists lists(n_);
    static constexpr OpKind kKinds[3] = {OpKind::F, OpKind::I, OpKind::W};
    for (int d = 0; d < n_; ++d) {
      for (const auto& [kind, slot, mb] : order_[d]) {
        const int stage = leg_of(kind, slot) == 0 ? d : 2 * n_ - 1 - d;
        lists[d].push_back({kKinds[kind], false, stage, mb});
      }
    }
    return lists;
  }

 private:
  struct Placed {
    int kind;
    int slot;
    int mb;
  };

  size_t id(int kind, int slot, int d, int mb) const {
    return ((static_cast<size_t>(kind) * 2 + slot) * n_ + d) * m_ + mb;
  }
  TimeNs end_of(int kind, int slot, int d, int mb) const { return end_ns_[id(kind, slot, d, mb)]; }
  // The reference reads end_time[-1] (Python: the last node, device N-1's last W of "chunk 1") where an op
  // has no producer on another device; kept so that its W-filling choices are the same.
  TimeNs last_node_end_ns() const { return end_ns_.back(); }

  TimeNs duration(int kind, int slot, int d, int mb) const {
    return p_.devices[d].duration_ns[kind][leg_of(kind, slot)][mb];
  }
  Bytes delta(int kind, int slot, int d) const {
    return p_.devices[d].memory_delta_bytes[kind][leg_of(kind, slot)];
  }
  TimeNs latency(int kind, int slot, int d) const {
    return p_.devices[d].input_latency_ns[kind][leg_of(kind, slot)];
  }

  TimeNs max_stage_bubble(int d) const {
    TimeNs worst = 0;
    for (TimeNs b : bubble_ns_) worst = std::max(worst, b);
    if (d >= 0) worst = std::max(worst, max_allowance_ - allowance_[d]);
    return worst;
  }

  // The producer of the op a device would put next: the same kind and slot on the neighbouring device
  // (slot 1 from device d+1, slot 0 from device d-1); -1 where there is none.
  long producer(int kind, int slot, int d, int mb) const {
    if (slot == 1 && d < n_ - 1) return static_cast<long>(id(kind, slot, d + 1, mb));
    if (slot == 0 && d > 0) return static_cast<long>(id(kind, slot, d - 1, mb));
    return -1;
  }
  TimeNs end_or_last(long producer_id) const {
    return producer_id >= 0 ? end_ns_[producer_id] : last_node_end_ns();
  }

  // Whether the device's next op of this kind and slot exists and its inputs are placed: the checks of
  // put() that an uneven-cost order may fail.
  bool ready(int kind, int slot, int d) const {
    const int mb = count_[d][kind * 2 + slot];
    if (mb >= m_) return false;
    const int before = kind == kW ? kI * 2 + slot : kind * 2 + slot - 1;
    if (before >= 0 && end_of(before / 2, before % 2, d, mb) < 0) return false;
    const long from = kind < kW ? producer(kind, slot, d, mb) : -1;
    return from < 0 || end_ns_[from] >= 0;
  }

  void put(int kind, int slot, int d) {
    const int mb = count_[d][kind * 2 + slot];
    const auto op = [&] {
      return fmt::format("{}{} of microbatch {} on device {}", "FIW"[kind],
                         leg_of(kind, slot) == 0 ? " (first chunk)" : " (second chunk)", mb, d + 1);
    };
    if (mb >= m_) throw Infeasible{fmt::format("a {} beyond the batch", op())};
    const TimeNs cost = duration(kind, slot, d, mb);
    const TimeNs no_bubble = free_ns_[d] + cost;
    TimeNs end = no_bubble;
    if (memory_[d] + delta(kind, slot, d) > p_.devices[d].limit_bytes) {
      throw Infeasible{fmt::format("{} would exceed the memory limit", op())};
    }
    // The reference's order checks: F slot 0, F slot 1, I slot 0, I slot 1 of a microbatch in turn on the
    // device, and a W after its I.
    const int before = kind == kW ? kI * 2 + slot : kind * 2 + slot - 1;
    if (before >= 0 && end_of(before / 2, before % 2, d, mb) < 0) {
      throw Infeasible{fmt::format("{} placed before the op it follows on its device", op())};
    }
    if (kind < kW) {
      const long from = producer(kind, slot, d, mb);
      if (from >= 0) {
        if (end_ns_[from] < 0) throw Infeasible{fmt::format("{} placed before its input's producer", op())};
        end = std::max(end, end_ns_[from] + latency(kind, slot, d) + cost);
      }
    }
    if (count_[d][0] > 0) bubble_ns_[d] += end - no_bubble;
    end_ns_[id(kind, slot, d, mb)] = end;
    free_ns_[d] = end;
    memory_[d] += delta(kind, slot, d);
    order_[d].push_back({kind, slot, mb});
    if (kind == kI) pending_w_[d].push_back(slot);
    if (kind < kW) ++placed_forwards_and_input_grads_;
    ++count_[d][kind * 2 + slot];
  }

  void put_w(int d) {
    if (pending_w_[d].empty()) {
      throw Infeasible{fmt::format("memory needs a W on device {} and none is pending", d + 1)};
    }
    const int slot = pending_w_[d].front();
    pending_w_[d].pop_front();
    put(kW, slot, d);
  }

  TimeNs next_w_ns(int d) const {
    const int slot = pending_w_[d].front();
    return duration(kW, slot, d, count_[d][kW * 2 + slot]);
  }

  void warm_up() {
    for (int d = 0; d < n_; ++d) put(kF, 0, d);
    for (int d = n_ - 1; d >= 0; --d) {
      if (d == n_ - 1) {
        put(kF, 1, d);
        continue;
      }
      const TimeNs turn_arrival_ns = end_of(kF, 1, d + 1, 0) + latency(kF, 1, d);
      const Bytes forward_bytes = delta(kF, 0, d);
      while (memory_[d] + forward_bytes * (2 + d * 2) <= p_.devices[d].limit_bytes && count_[d][0] < m_ &&
             free_ns_[d] + duration(kF, 0, d, count_[d][0]) <= turn_arrival_ns &&
             devices_above_fit_a_forward(d)) {
        for (int j = 0; j <= d; ++j) put(kF, 0, j);
      }
      put(kF, 1, d);
    }
    int slot = 0;
    for (int d = 1; d < n_; ++d) {
      int idle_passes = 0;
      while (count_[d][0] + count_[d][1] < count_[d - 1][0] + count_[d - 1][1] ||
             (count_[d][1] <= count_[d - 1][1] && count_[d - 1][1] < m_)) {
        bool placed = false;
        for (int j = n_ - 1; j >= d; --j) {
          if (ready(kF, slot, j) && fits(kF, slot, j)) {
            put(kF, slot, j);
            placed = true;
          }
        }
        // With uneven costs a pass may find nothing ready or nothing that fits (the reference fails its
        // check there instead): the rounds place the rest.
        idle_passes = placed ? 0 : idle_passes + 1;
        if (idle_passes >= 2) break;
        slot = 1 - slot;
      }
    }
  }

  bool fits(int kind, int slot, int d) const {
    return memory_[d] + delta(kind, slot, d) <= p_.devices[d].limit_bytes;
  }

  // The reference's warm-up adds a leg-0 F to every device 0..d at once; with uneven memory a device above
  // may be full before d is (the reference would fail its check).
  bool devices_above_fit_a_forward(int d) const {
    for (int j = 0; j < d; ++j) {
      if (count_[j][0] >= m_ || !fits(kF, 0, j)) return false;
    }
    return true;
  }

  // Ws into the gap before an op whose input comes from `from`: every W that ends before the input arrives,
  // then one more when the gap would make this device's bubble the largest and `fill` allows it.
  void fill_gap(int d, long from, TimeNs from_latency_ns, bool fill) {
    while (!pending_w_[d].empty() && from >= 0 &&
           end_ns_[from] + from_latency_ns >= free_ns_[d] + next_w_ns(d)) {
      put_w(d);
    }
    if (!pending_w_[d].empty() &&
        end_or_last(from) + from_latency_ns - free_ns_[d] > max_stage_bubble(d) - bubble_ns_[d] && fill) {
      put_w(d);
    }
  }

  void input_grad_round() {
    for (int d = 0; d < n_; ++d) {
      const Bytes worst_i = std::max(delta(kI, 0, d), delta(kI, 1, d));
      while (memory_[d] + worst_i > p_.devices[d].limit_bytes) put_w(d);
    }
    std::vector<int> slot0;
    std::vector<int> slot1;
    for (int d = 0; d < n_; ++d) {
      if (count_[d][3] >= count_[d][2]) {
        slot0.push_back(d);
      } else if (d == n_ - 1) {
        slot1.push_back(d);
      } else if (end_of(kI, 1, d + 1, count_[d][3]) >= 0 || count_[d][2] >= m_) {
        slot1.push_back(d);
      } else {
        slot0.push_back(d);
      }
    }
    std::vector<std::pair<int, int>> puts;
    for (auto it = slot1.rbegin(); it != slot1.rend(); ++it) puts.emplace_back(*it, 1);
    for (int d : slot0) puts.emplace_back(d, 0);
    for (const auto& [d, slot] : puts) {
      if (!ready(kI, slot, d)) continue;
      const int mb = count_[d][kI * 2 + slot];
      // Slot 1 always takes the extra W; slot 0 only with fill_b.
      fill_gap(d, mb < m_ ? producer(kI, slot, d, mb) : -1, latency(kI, slot, d),
               slot == 1 || flags_.fill_before_input_grad);
      put(kI, slot, d);
    }
  }

  void forward_round() {
    for (int d = 0; d < n_; ++d) {
      if (count_[d][1] >= m_) continue;
      int slot = -1;
      if (count_[d][1] >= count_[d][0]) {
        slot = 0;
      } else if (d == n_ - 1) {
        slot = 1;
      } else if (end_of(kF, 1, d + 1, count_[d][1]) >= 0) {
        slot = 1;
      } else if (count_[d][0] < m_) {
        if (d == 0 || end_of(kF, 0, d - 1, count_[d][0]) >= 0) slot = 0;
      }
      if (slot < 0 || !ready(kF, slot, d)) continue;
      while (!fits(kF, slot, d) && !pending_w_[d].empty()) put_w(d);
      // Memory full of activations whose I has not run: the F waits a round (the reference, with one cost
      // per kind, never gets here; it would fail its check).
      if (!fits(kF, slot, d)) continue;
      const int mb = count_[d][slot];
      fill_gap(d, mb < m_ ? producer(kF, slot, d, mb) : -1, latency(kF, slot, d), flags_.fill_before_forward);
      put(kF, slot, d);
    }
  }

  const ZbvProblem& p_;
  ZbvFlags flags_;
  int n_;
  int m_;
  std::vector<std::vector<int>> count_;  // per device: F slot 0, F slot 1, I slot 0, I slot 1, W slot 0, W 1
  std::vector<TimeNs> end_ns_;           // per (kind, slot, device, microbatch); -1 = not placed
  std::vector<TimeNs> free_ns_;
  std::vector<Bytes> memory_;
  std::vector<TimeNs> bubble_ns_;  // idle time after the device's first F
  std::vector<std::deque<int>> pending_w_;
  std::vector<std::vector<Placed>> order_;
  std::vector<TimeNs> allowance_;
  TimeNs max_allowance_ = -1;
  long placed_forwards_and_input_grads_ = 0;
};

struct Attempt {
  ZbvPlan plan;
  std::vector<TimeNs> bubbles_ns;
};

// nullopt with the reason in `why` when the reference's checks reject the order.
std::optional<Attempt> attempt(const ZbvProblem& problem, const ZbvFlags& flags,
                               const std::vector<TimeNs>* allowance, std::string* why = nullptr) {
  if (problem.devices.empty() || problem.microbatches < 1) {
    if (why != nullptr) *why = "no devices or no microbatches";
    return std::nullopt;
  }
  Builder builder(problem, flags, allowance);
  try {
    builder.run();
  } catch (const Infeasible& e) {
    if (why != nullptr) *why = e.why;
    return std::nullopt;
  }
  return Attempt{{builder.lists(), builder.max_bubble_ns()}, builder.bubbles_ns()};
}

std::optional<ZbvPlan> schedule_with(const ZbvProblem& problem, const ZbvFlags& flags, std::string* why) {
  std::optional<Attempt> best = attempt(problem, flags, nullptr, why);
  if (!best) return std::nullopt;
  // The reference re-runs with this run's bubbles as the allowance and keeps the result while it improves.
  while (true) {
    std::optional<Attempt> next = attempt(problem, flags, &best->bubbles_ns);
    if (!next || next->plan.max_device_bubble_ns >= best->plan.max_device_bubble_ns) break;
    best = std::move(next);
  }
  return std::move(best->plan);
}

}  // namespace

ZbvProblem make_zbv_problem(const PipelineSpec& spec, const CostModel& costs, double memory_limit) {
  const int n = spec.devices;
  const int m = spec.microbatches;
  ZbvProblem problem;
  problem.microbatches = m;
  problem.devices.resize(n);
  // A fresh comm model per probe: a link model queues a second transfer behind the first.
  const auto latency = [&](int src_stage, int dst_stage) -> TimeNs {
    const int src = src_stage < n ? src_stage : 2 * n - 1 - src_stage;
    const int dst = dst_stage < n ? dst_stage : 2 * n - 1 - dst_stage;
    if (src == dst || !spec.make_comm) return 0;
    return spec.make_comm()
        ->send(src, dst, costs.transfer_bytes(std::min(src_stage, dst_stage)), 0)
        .arrival_ns;
  };
  for (int d = 0; d < n; ++d) {
    ZbvDevice& device = problem.devices[d];
    const int stages[2] = {d, 2 * n - 1 - d};
    double limit = 0;
    for (int leg = 0; leg < 2; ++leg) {
      const int s = stages[leg];
      for (int mb = 0; mb < m; ++mb) {
        device.duration_ns[kF][leg].push_back(costs.duration(forward(s, mb)));
        device.duration_ns[kI][leg].push_back(costs.duration(backward_input(s, mb)));
        device.duration_ns[kW][leg].push_back(costs.duration(backward_weight(s, mb)));
      }
      const Bytes held = costs.activation_bytes(s);
      const Bytes kept_for_w = costs.weight_grad_activation_bytes(s);
      device.memory_delta_bytes[kF][leg] = held;
      device.memory_delta_bytes[kI][leg] = -(held - kept_for_w);
      device.memory_delta_bytes[kW][leg] = -kept_for_w;
      limit += memory_limit * n * static_cast<double>(held);
    }
    // A limit beyond 2^62 bytes is no limit: clamped so that the conversion cannot overflow.
    device.limit_bytes = static_cast<Bytes>(std::min(std::floor(limit), 0x1p62));
    // Leg 0's F comes from stage d-1 (device d-1), its I from stage d+1 (device d+1); leg 1's F from stage
    // 2N-2-d (device d+1), its I from stage 2N-d (device d-1). The turn (device N-1) is local.
    const int down = stages[0];
    const int up = stages[1];
    if (down > 0) device.input_latency_ns[kF][0] = latency(down - 1, down);
    device.input_latency_ns[kI][0] = latency(down + 1, down);
    device.input_latency_ns[kF][1] = latency(up - 1, up);
    if (up < 2 * n - 1) device.input_latency_ns[kI][1] = latency(up + 1, up);
  }
  return problem;
}

std::optional<ZbvPlan> zbv_greedy_schedule(const ZbvProblem& problem, const ZbvFlags& flags) {
  return schedule_with(problem, flags, nullptr);
}

ZbvPlan zbv_greedy_best(const ZbvProblem& problem) {
  std::optional<ZbvPlan> best;
  std::string why;
  for (const bool fill_b : {true, false}) {
    for (const bool fill_f : {true, false}) {
      std::optional<ZbvPlan> plan = schedule_with(problem, {fill_b, fill_f}, why.empty() ? &why : nullptr);
      if (plan && (!best || plan->max_device_bubble_ns < best->max_device_bubble_ns)) best = std::move(plan);
    }
  }
  if (!best) {
    throw InputError(fmt::format(
        "no order fits the memory limit: {} (the greedy needs room for each device's warm-up forwards; raise "
        "memory_limit)",
        why));
  }
  return std::move(*best);
}

}  // namespace pipesim
