#include "io/scenario.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/errors.h"
#include "base/text_file.h"
#include "cost_models/cost_table_checks.h"
#include "io/data_dirs.h"
#include "io/executor_section.h"
#include "io/measured_section.h"
#include "io/model_section.h"
#include "io/yaml_reader.h"
#include "pipesim_source_dir.h"

namespace pipesim {
namespace {

// Applies "a.b.c=value" to the document; returns the dotted key.
std::string apply_override(YAML::Node& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError(
        fmt::format("--set '{}': expected key=value, e.g. pipeline.microbatches=16", assignment));
  }
  const std::string key = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("--set {}: the value is not valid YAML: {}", key, e.msg));
  }
  std::vector<std::string> parts;
  std::stringstream stream(key);
  for (std::string part; std::getline(stream, part, '.');) parts.push_back(part);
  // yaml-cpp nodes are handles: walk down with a list of them.
  std::vector<YAML::Node> path{root};
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node child = path.back()[parts[i]];
    if (!child.IsDefined() || child.IsNull()) {
      path.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
      child = path.back()[parts[i]];
    }
    if (!child.IsMap()) throw InputError(fmt::format("--set {}: '{}' is not a map", key, parts[i]));
    path.push_back(child);
  }
  path.back()[parts.back()] = value;
  return key;
}

void read_pipeline(const YamlReader& r, const YAML::Node& node, Scenario& s) {
  r.expect_map(
      node, "pipeline",
      {"stages", "microbatches", "microbatch_size", "global_batch", "batches", "seq_len", kLayerSplitKey});
  if (!node["stages"]) r.fail(node, "pipeline.stages", "a value (the number of stages N)");
  if (!node["microbatches"]) r.fail(node, "pipeline.microbatches", "a value (microbatches m per batch)");
  s.stages = r.get_int(node["stages"], "pipeline.stages", 1);
  s.microbatches = r.get_int(node["microbatches"], "pipeline.microbatches", 1);
  if (node["microbatch_size"])
    s.microbatch_size = r.get_int(node["microbatch_size"], "pipeline.microbatch_size", 1);
  if (node["global_batch"]) {
    if (node["microbatch_size"]) {
      r.fail(node["global_batch"], "pipeline.global_batch",
             "either global_batch or microbatch_size, not both");
    }
    s.global_batch = r.get_int(node["global_batch"], "pipeline.global_batch", s.microbatches);
  }
  if (node["batches"]) s.batches = r.get_int(node["batches"], "pipeline.batches", 1);
  if (node["seq_len"]) s.seq_len = r.get_int(node["seq_len"], "pipeline.seq_len", 1);
  constexpr long kMaxOps = 200'000'000;
  // In double: the int64 product of three ints can wrap (to 0 for 65536 x 65536 x 65536 x ...).
  if (static_cast<double>(s.stages) * s.microbatches * s.batches > kMaxOps / 4) {
    r.fail(node, "pipeline", fmt::format("stages x microbatches x batches <= {}", kMaxOps / 4));
  }
}

void read_costs(const YamlReader& r, const YAML::Node& node, Scenario& s) {
  const int n = s.stages;
  r.expect_map(node, "costs",
               {"forward_ms", "backward_ms", "backward_input_ms", "backward_weight_ms", "comm_ms",
                "optimizer_ms", "overlap_fb_ms", "activation_bytes", "weight_grad_activation_bytes",
                "transfer_bytes", "parameter_bytes", "memory_capacity_gb"});
  if (node["memory_capacity_gb"]) {
    s.memory_capacity_gb = r.get_double(node["memory_capacity_gb"], "costs.memory_capacity_gb", 1e-6);
    if (!(s.memory_capacity_gb <= 1e6)) {
      r.fail(node["memory_capacity_gb"], "costs.memory_capacity_gb", "a device's memory in GiB, at most 1e6");
    }
  }
  // Every time and byte value within base/value_ranges.h's limits, converted where it is read.
  auto times = [&](const char* key) {
    const YAML::Node value = node[key];
    if (!value) return std::vector<TimeNs>(n, 0);
    return r.get_ms_list_as_ns(value, std::string("costs.") + key, n);
  };
  auto bytes = [&](const char* key, Bytes fallback) {
    const YAML::Node value = node[key];
    if (!value) return std::vector<Bytes>(n, fallback);
    return r.get_bytes_list(value, std::string("costs.") + key, n);
  };
  if (!node["forward_ms"]) r.fail(node, "costs.forward_ms", "a value (forward time per microbatch)");
  ExplicitCostTable& c = s.costs;
  c.forward_ns = times("forward_ms");
  const bool has_b = static_cast<bool>(node["backward_ms"]);
  const bool has_i = static_cast<bool>(node["backward_input_ms"]);
  const bool has_w = static_cast<bool>(node["backward_weight_ms"]);
  if (has_b && (has_i || has_w)) {
    r.fail(node["backward_ms"], "costs.backward_ms",
           "either backward_ms or backward_input_ms with backward_weight_ms, not both");
  }
  if (has_b) {
    c.backward_input_ns = times("backward_ms");
    c.backward_weight_ns.assign(n, 0);
  } else if (has_i && has_w) {
    c.backward_input_ns = times("backward_input_ms");
    c.backward_weight_ns = times("backward_weight_ms");
    s.backward_split_given = true;
  } else {
    r.fail(node, "costs.backward_ms", "backward_ms, or backward_input_ms and backward_weight_ms");
  }
  c.optimizer_ns = times("optimizer_ms");
  if (node["overlap_fb_ms"]) {
    // Overlapping a forward with a backward hides at most the shorter of the two.
    c.overlap_fb_ns = times("overlap_fb_ms");
    for (int d = 0; d < n; ++d) {
      const TimeNs backward_ns = c.backward_input_ns[d] + c.backward_weight_ns[d];
      if (c.overlap_fb_ns[d] < std::max(c.forward_ns[d], backward_ns) ||
          c.overlap_fb_ns[d] > c.forward_ns[d] + backward_ns) {
        r.fail(node["overlap_fb_ms"], "costs.overlap_fb_ms",
               fmt::format("between max(F, B) = {:g} ms and F + B = {:g} ms on device {} (one slot of a "
                           "forward overlapped with a backward)",
                           ns_to_ms(std::max(c.forward_ns[d], backward_ns)),
                           ns_to_ms(c.forward_ns[d] + backward_ns), d + 1));
      }
    }
  }
  // Default 1 MB per microbatch: a unit, so that peaks read as microbatches held even when a device
  // splits it over chunks.
  c.activation_bytes = bytes("activation_bytes", 1'000'000);
  c.weight_grad_activation_bytes = bytes("weight_grad_activation_bytes", 0);
  if (!node["weight_grad_activation_bytes"]) {
    s.weight_grad_memory_missing_where = r.where(node, "costs.weight_grad_activation_bytes");
  }
  c.transfer_bytes = bytes("transfer_bytes", 0);
  c.parameter_bytes = bytes("parameter_bytes", 0);
  for (int d = 0; d < n; ++d) {
    if (c.weight_grad_activation_bytes[d] > c.activation_bytes[d]) {
      r.fail(node["weight_grad_activation_bytes"], "costs.weight_grad_activation_bytes",
             "at most activation_bytes (M_W is part of M_B)");
    }
  }
  s.comm.latency_ns = times("comm_ms");
  if (!some_op_takes_time(c)) {
    r.fail(node, "costs",
           "a positive forward_ms or backward time on some stage (with every op 0 ms a batch takes no time "
           "and throughput is undefined)");
  }
}

void read_comm(const YamlReader& r, const YAML::Node& node, const YAML::Node& costs, Scenario& s) {
  r.expect_map(node, "comm", {"model", "bandwidth_gb_per_s", "latency_ms", "blocking"});
  if (node["blocking"]) {
    const YAML::Node blocking = node["blocking"];
    if (!blocking.IsScalar() || (blocking.Scalar() != "true" && blocking.Scalar() != "false")) {
      r.fail(blocking, "comm.blocking",
             "true (a transfer holds the sender's and the receiver's compute streams) or false (it overlaps "
             "compute)");
    }
    s.comm.blocking = blocking.Scalar() == "true";
  }
  const std::string model = node["model"] ? r.get_string(node["model"], "comm.model") : "latency";
  if (model == "latency") {
    if (node["bandwidth_gb_per_s"] || node["latency_ms"]) {
      r.fail(node, "comm", "only 'model: latency' (the latency is costs.comm_ms) or 'model: link'");
    }
    return;
  }
  if (model != "link") r.fail(node["model"], "comm.model", "'latency' or 'link'");
  if (costs && costs["comm_ms"]) {
    r.fail(costs["comm_ms"], "costs.comm_ms", "no comm_ms with 'comm: {model: link}' (use comm.latency_ms)");
  }
  if (!node["bandwidth_gb_per_s"])
    r.fail(node, "comm.bandwidth_gb_per_s", "a bandwidth in GB/s for the link model");
  s.comm.model = CommSpec::Model::kLink;
  s.comm.bandwidth_bytes_per_ns = r.get_double(node["bandwidth_gb_per_s"], "comm.bandwidth_gb_per_s", 1e-9);
  s.comm.latency_ns.assign(1, node["latency_ms"] ? r.get_ms_as_ns(node["latency_ms"], "comm.latency_ms") : 0);
}

// model: + hardware: instead of costs:. The comm defaults to the profile's link.
void read_transformer(const YamlReader& r, const YAML::Node& root, Scenario& s) {
  s.transformer = read_transformer_setup(r, root);
  s.backward_split_given = true;
  const int model_seq_len = s.transformer->model.seq_len;
  if (root["pipeline"]["seq_len"] && s.seq_len != model_seq_len) {
    r.fail(root["pipeline"]["seq_len"], "pipeline.seq_len",
           fmt::format("model.seq_len ({}) or nothing", model_seq_len));
  }
  s.seq_len = model_seq_len;
  // The peer link, or the host-staged path of a profile that measured host <-> device copies only.
  const std::optional<LinkSpec> link = s.transformer->profile.stage_link();
  s.comm.latency_ns.assign(s.stages, 0);
  // comm: {blocking: true} alone keeps the profile's link.
  const YAML::Node comm = root["comm"];
  if (comm && (!comm.IsMap() || comm["model"])) {
    if (!comm.IsMap() || comm["model"].as<std::string>("") != "link") {
      r.fail(
          comm, "comm",
          "{model: link, bandwidth_gb_per_s: ..., latency_ms: ...} (or no comm.model: the profile's link)");
    }
  } else if (link) {
    s.comm.model = CommSpec::Model::kLink;
    s.comm.bandwidth_bytes_per_ns = link->bandwidth_gb_per_s;
    s.comm.latency_ns.assign(1, static_cast<TimeNs>(std::llround(link->latency_us * 1e3)));
    s.comm.from_profile = true;
  } else if (s.stages > 1) {
    r.fail(root, "comm",
           fmt::format("comm: {{model: link, ...}}: hardware profile {} has no link measurements (neither a "
                       "peer link nor host <-> device copies)",
                       s.transformer->profile.source));
  }
}

PipelineOverride read_pipeline_override(const YamlReader& r, const YAML::Node& node, const std::string& key) {
  r.expect_map(node, key, {"microbatches", "microbatch_size", "global_batch", kLayerSplitKey});
  PipelineOverride o;
  if (node[kLayerSplitKey])
    o.layer_split = read_layer_split(r, node[kLayerSplitKey], key + "." + kLayerSplitKey, o.stage_layers);
  if (node["microbatches"]) o.microbatches = r.get_int(node["microbatches"], key + ".microbatches", 1);
  if (node["microbatch_size"])
    o.microbatch_size = r.get_int(node["microbatch_size"], key + ".microbatch_size", 1);
  if (node["global_batch"]) o.global_batch = r.get_int(node["global_batch"], key + ".global_batch", 1);
  if (o.microbatch_size && o.global_batch) {
    r.fail(node["global_batch"], key + ".global_batch", "either global_batch or microbatch_size, not both");
  }
  return o;
}

void read_schedules(const YamlReader& r, const YAML::Node& node, Scenario& s) {
  if (!node.IsSequence())
    r.fail(node, "schedules", "a list of schedule names or {name: ..., parameter: ...} maps");
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node entry = node[i];
    const std::string key = fmt::format("schedules[{}]", i);
    ScheduleRequest request;
    request.params = ScheduleParams(r.where(entry, key));
    if (entry.IsScalar()) {
      request.name = entry.Scalar();
    } else if (entry.IsMap()) {
      if (!entry["name"]) r.fail(entry, key + ".name", "the schedule's name");
      r.expect_unique_keys(entry, key);
      for (const auto& item : entry) {
        const std::string param = item.first.Scalar();
        if (param == "name") {
          request.name = r.get_string(item.second, key + ".name");
        } else if (param == "pipeline") {
          request.pipeline = read_pipeline_override(r, item.second, key + ".pipeline");
        } else if (item.second.IsScalar()) {
          request.params.set(param, item.second.Scalar());
        } else if (item.second.IsSequence() && item.second.size() > 0) {
          // A list (e.g. PACI's per-stage max_in_flight) reaches the schedule item by item.
          std::vector<std::string> items;
          for (const auto& value : item.second) {
            if (!value.IsScalar()) r.fail(value, key + "." + param, "a scalar or a list of scalars");
            items.push_back(value.Scalar());
          }
          request.params.set_list(param, std::move(items));
        } else {
          r.fail(item.second, key + "." + param, "a scalar or a list of scalars");
        }
      }
    } else {
      r.fail(entry, key, "a schedule name or a map with 'name'");
    }
    s.schedules.push_back(std::move(request));
  }
}

}  // namespace

Scenario parse_scenario(const std::string& yaml_text, const std::string& source,
                        const std::vector<std::string>& overrides) {
  YAML::Node root = YamlReader::load(yaml_text, source);
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) {
    throw InputError(fmt::format("{}:{}: expected a map of keys (pipeline:, costs: or model:, ...), got {}",
                                 source, root.Mark().line + 1,
                                 root.IsSequence() ? std::string("a list") : show_yaml(root)));
  }
  std::set<std::string> overridden;
  for (const std::string& assignment : overrides) overridden.insert(apply_override(root, assignment));
  std::set<std::string> pinned;
  for (const char* key : {"microbatches", "microbatch_size", "global_batch", kLayerSplitKey}) {
    if (overridden.count(std::string("pipeline.") + key)) pinned.insert(key);
  }
  const YamlReader r(source, overridden);
  r.expect_map(root, "",
               {"name", "pipeline", "costs", "model", "hardware", "parallel", "comm", "optimizer",
                "schedules", "executor", "measured"});

  Scenario s;
  s.source = source;
  s.pinned_pipeline_keys = std::move(pinned);
  s.name = root["name"] ? r.get_string(root["name"], "name") : std::filesystem::path(source).stem().string();
  if (!root["pipeline"]) r.fail(root, "pipeline", "a map with stages and microbatches");
  read_pipeline(r, root["pipeline"], s);
  if (root["costs"] && root["model"]) {
    r.fail(root["model"], "model", "either costs: or model: (with hardware:), not both");
  }
  if (root["model"]) {
    read_transformer(r, root, s);
  } else {
    if (!root["costs"]) {
      r.fail(root, "costs", "a map with forward_ms and the backward times, or model: and hardware:");
    }
    reject_transformer_keys(r, root);
    read_costs(r, root["costs"], s);
  }
  if (root["comm"]) read_comm(r, root["comm"], root["costs"], s);
  if (root["optimizer"]) {
    const YAML::Node optimizer = root["optimizer"];
    r.expect_map(optimizer, "optimizer",
                 {"sync", kOptimizerTypeKey, kOptimizerStateKey, kOptimizerPreconditionKey});
    if (optimizer["sync"]) {
      // A scenario chooses between the synchronous ones; `none` is an asynchronous schedule's own.
      const std::string given =
          r.get_choice(optimizer["sync"], "optimizer.sync", {"barrier", "post-validation"},
                       "'barrier' or 'post-validation'");
      for (const auto& [name, sync] : sync_names())
        if (name == given) s.sync = sync;
    }
  }
  if (root["schedules"]) read_schedules(r, root["schedules"], s);
  if (root["executor"]) s.executor = read_executor_section(r, root["executor"]);
  if (root["measured"]) {
    std::vector<std::string> schedule_names;
    for (const ScheduleRequest& request : s.schedules) schedule_names.push_back(request.name);
    s.measured = read_measured_section(r, root["measured"], schedule_names);
  }
  return s;
}

Scenario load_scenario(const std::string& path_as_given, const std::vector<std::string>& overrides) {
  const std::string path = input_or_data_path(path_as_given);
  return parse_scenario(read_text_file(path, "scenario file"), path, overrides);
}

std::string default_scenario_path() {
  return find_data_path("scenarios/default.yaml", "the default scenario");
}

}  // namespace pipesim
