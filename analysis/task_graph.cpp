#include "analysis/task_graph.h"

#include <fmt/format.h>

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/topological_sort.hpp>

#include "base/errors.h"

namespace pipesim {
namespace {

// Compressed sparse rows: the graph is built once from an edge list and only read afterwards, so this is
// several times cheaper than an adjacency_list (one allocation instead of one per vertex and edge).
struct EdgeDelay {
  TimeNs delay_ns = 0;
};
using Graph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, EdgeDelay>;
constexpr size_t kNone = static_cast<size_t>(-1);

// Op indices by (stage, microbatch) for the op kinds that carry data.
struct OpIndex {
  OpIndex(const RunTrace& trace) : microbatches(trace.total_microbatches) {
    const size_t cells = static_cast<size_t>(trace.layout.stages) * microbatches;
    forward.assign(cells, kNone);
    input_grad.assign(cells, kNone);
    weight_grad.assign(cells, kNone);
    activation_arrival.assign(cells, 0);
    gradient_arrival.assign(cells, 0);
    for (size_t i = 0; i < trace.ops.size(); ++i) {
      const Action& a = trace.ops[i].action;
      if (a.kind == OpKind::U) continue;
      const size_t c = cell(a.stage, a.microbatch);
      if (a.kind == OpKind::F) forward[c] = i;
      if (a.kind == OpKind::B || a.kind == OpKind::I) input_grad[c] = i;
      if (a.kind == OpKind::W) weight_grad[c] = i;
    }
    for (const TransferRecord& t : trace.transfers) {
      const size_t c = cell(t.dst_stage, t.microbatch);
      (t.producer == OpKind::F ? activation_arrival : gradient_arrival)[c] = t.arrival_ns;
    }
  }
  size_t cell(int stage, int mb) const { return static_cast<size_t>(stage) * microbatches + mb; }

  int microbatches;
  std::vector<size_t> forward, input_grad, weight_grad;
  std::vector<TimeNs> activation_arrival, gradient_arrival;  // at the receiving stage; 0 = same device
};

// The graph's edges, in the order they are added (which fixes each vertex's out-edge order).
struct EdgeList {
  explicit EdgeList(const std::vector<OpRecord>& ops) : ops(ops) {
    pairs.reserve(ops.size() * 3);
    delays.reserve(ops.size() * 3);
  }
  // delay = time from the end of `from` until its output is usable by `to`.
  void add(size_t from, size_t to, TimeNs ready_ns) {
    if (from == kNone) return;
    pairs.emplace_back(from, to);
    delays.push_back({std::max<TimeNs>(0, ready_ns - ops[from].end_ns)});
  }

  const std::vector<OpRecord>& ops;
  std::vector<std::pair<size_t, size_t>> pairs;
  std::vector<EdgeDelay> delays;
};

// Each op's data inputs: F the previous stage's F, B/I its F and the next stage's B/I, W its B/I.
void add_data_edges(const RunTrace& trace, const OpIndex& index, EdgeList& edges) {
  const auto& ops = trace.ops;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Action& a = ops[i].action;
    if (a.kind == OpKind::U) continue;
    const size_t c = index.cell(a.stage, a.microbatch);
    switch (a.kind) {
      case OpKind::F:
        if (!trace.layout.is_first_stage(a.stage)) {
          edges.add(index.forward[index.cell(a.stage - 1, a.microbatch)], i, index.activation_arrival[c]);
        }
        break;
      case OpKind::B:
      case OpKind::I:
        edges.add(index.forward[c], i, 0);
        if (!trace.layout.is_last_stage(a.stage)) {
          edges.add(index.input_grad[index.cell(a.stage + 1, a.microbatch)], i, index.gradient_arrival[c]);
        }
        break;
      case OpKind::W:
        edges.add(index.input_grad[c], i, 0);
        break;
      case OpKind::U:
        break;
    }
  }
}

// Same-device order, and barrier edges: a synchronized U(k) waits for every device's last op before
// that device's first U(k).
void add_device_order_and_barrier_edges(const RunTrace& trace, EdgeList& edges) {
  const auto& ops = trace.ops;
  std::vector<std::vector<size_t>> by_device(trace.layout.devices);
  for (size_t i = 0; i < ops.size(); ++i) by_device[ops[i].device].push_back(i);
  std::vector<std::vector<size_t>> barrier_last_before(0);
  std::vector<std::vector<size_t>> barrier_members(0);
  for (const auto& list : by_device) {
    int next_step = 0;
    for (size_t k = 0; k < list.size(); ++k) {
      const Action& a = ops[list[k]].action;
      // The device's first step of a batch follows its last op after its work before the barrier.
      const bool arrives = a.kind == OpKind::U && a.synchronized && a.microbatch >= next_step;
      if (k > 0) {
        const TimeNs before = arrives ? trace.before_barrier(ops[list[k]].device, a.microbatch) : 0;
        edges.add(list[k - 1], list[k], ops[list[k - 1]].end_ns + before);
      }
      if (a.kind != OpKind::U || !a.synchronized) continue;
      const auto step = static_cast<size_t>(a.microbatch);
      if (barrier_members.size() <= step) {
        barrier_members.resize(step + 1);
        barrier_last_before.resize(step + 1);
      }
      barrier_members[step].push_back(list[k]);
      if (a.microbatch >= next_step) {
        next_step = a.microbatch + 1;
        if (k > 0) barrier_last_before[step].push_back(list[k - 1]);
      }
    }
  }
  for (size_t step = 0; step < barrier_members.size(); ++step) {
    for (size_t member : barrier_members[step]) {
      for (size_t before : barrier_last_before[step]) {
        // The device arrives after its steps' work before the barrier (its gradient reductions).
        if (ops[before].device != ops[member].device) {
          edges.add(before, member,
                    ops[before].end_ns + trace.before_barrier(ops[before].device, static_cast<int>(step)));
        }
      }
    }
  }
}

// Every edge must be respected by the realized times.
void check_edges_respected(const std::vector<OpRecord>& ops, const Graph& graph) {
  for (auto [e, end] = boost::edges(graph); e != end; ++e) {
    const size_t from = boost::source(*e, graph);
    const size_t to = boost::target(*e, graph);
    if (ops[from].end_ns + graph[*e].delay_ns > ops[to].start_ns) {
      throw ScheduleError(
          fmt::format("task graph: {} on device {} started at {} ns before its dependency {} "
                      "was ready at {} ns",
                      describe(ops[to].action), ops[to].device + 1, ops[to].start_ns,
                      describe(ops[from].action), ops[from].end_ns + graph[*e].delay_ns));
    }
  }
}

std::vector<size_t> topological_order(const Graph& graph, size_t vertices) {
  std::vector<size_t> order;
  order.reserve(vertices);
  try {
    boost::topological_sort(graph, std::back_inserter(order));
  } catch (const boost::not_a_dag&) {
    throw ScheduleError("task graph: the realized dependencies contain a cycle");
  }
  std::reverse(order.begin(), order.end());
  return order;
}

// Longest path in topological order: ready[v] = max over predecessors u of (finish[u] + delay).
void find_critical_path(const std::vector<OpRecord>& ops, const Graph& graph,
                        const std::vector<size_t>& order, TaskGraphReport& report) {
  std::vector<TimeNs> ready(ops.size(), 0);
  std::vector<TimeNs> finish(ops.size(), 0);
  std::vector<size_t> parent(ops.size(), kNone);
  size_t last = kNone;
  for (size_t u : order) {
    finish[u] = ready[u] + ops[u].duration_ns();
    if (last == kNone || finish[u] > finish[last]) last = u;
    for (auto [e, end] = boost::out_edges(u, graph); e != end; ++e) {
      const size_t v = boost::target(*e, graph);
      const TimeNs candidate = finish[u] + graph[*e].delay_ns;
      if (candidate > ready[v] || parent[v] == kNone) {  // candidate >= 0 == the initial ready[v]
        ready[v] = candidate;
        parent[v] = u;
      }
    }
  }
  if (last != kNone) {
    report.critical_path_ns = finish[last];
    for (size_t v = last; v != kNone; v = parent[v]) report.critical_path.push_back(v);
    std::reverse(report.critical_path.begin(), report.critical_path.end());
  }
}

}  // namespace

TaskGraphReport analyze_task_graph(const RunTrace& trace) {
  const auto& ops = trace.ops;
  const OpIndex index(trace);
  EdgeList edges(ops);
  add_data_edges(trace, index, edges);
  add_device_order_and_barrier_edges(trace, edges);
  const Graph graph(boost::edges_are_unsorted_multi_pass, edges.pairs.begin(), edges.pairs.end(),
                    edges.delays.begin(), ops.size());
  check_edges_respected(ops, graph);
  const std::vector<size_t> order = topological_order(graph, ops.size());
  TaskGraphReport report;
  report.vertices = boost::num_vertices(graph);
  report.edges = boost::num_edges(graph);
  find_critical_path(ops, graph, order, report);
  return report;
}

}  // namespace pipesim
