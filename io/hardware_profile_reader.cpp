#include "io/hardware_profile_reader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "base/did_you_mean.h"
#include "base/errors.h"
#include "base/text_file.h"
#include "base/value_ranges.h"
#include "io/data_dirs.h"
#include "io/yaml_reader.h"

namespace pipesim {
namespace {

constexpr const char* kFormat = "pipesim-hardware-profile-1";

std::vector<double> sorted_unique(std::set<double> values) {
  return {values.begin(), values.end()};
}

// `peak_tflops`: the profile's peak for the table's dtype, 0 when it states none. A rate above it would put
// MFU above 100 %: the table or the peak is wrong, and no figure read against them could be trusted.
GemmTable read_gemm_table(const YamlReader& r, const YAML::Node& rows, const std::string& key,
                          double peak_tflops) {
  if (!rows.IsSequence() || rows.size() == 0) r.fail(rows, key, "a list of [m, n, k, tflops] rows");
  std::set<double> ms, ns, ks;
  std::map<std::tuple<double, double, double>, double> rate;
  for (size_t i = 0; i < rows.size(); ++i) {
    const YAML::Node row = rows[i];
    const std::string row_key = fmt::format("{}[{}]", key, i);
    if (!row.IsSequence() || row.size() != 4) r.fail(row, row_key, "[m, n, k, tflops]");
    const double m = r.get_int(row[0], row_key + ".m", 1);
    const double n = r.get_int(row[1], row_key + ".n", 1);
    const double k = r.get_int(row[2], row_key + ".k", 1);
    const double tflops = r.get_double(row[3], row_key + ".tflops", 0);
    if (tflops <= 0) r.fail(row[3], row_key + ".tflops", "an achieved rate > 0");
    if (peak_tflops > 0 && tflops > peak_tflops) {
      r.fail(row[3], row_key + ".tflops",
             fmt::format(
                 "an achieved rate at most the profile's peak_tflops.{} ({:g} TFLOP/s), got {:g}: a GEMM "
                 "above the peak would give an MFU over 100 %",
                 key.substr(key.rfind('.') + 1), peak_tflops, tflops));
    }
    if (!rate.emplace(std::make_tuple(m, n, k), tflops).second) {
      r.fail(row, row_key, fmt::format("each (m, n, k) once; ({}, {}, {}) repeats", m, n, k));
    }
    ms.insert(m);
    ns.insert(n);
    ks.insert(k);
  }
  const std::vector<double> m = sorted_unique(ms), n = sorted_unique(ns), k = sorted_unique(ks);
  std::vector<double> tflops;
  for (double mi : m) {
    for (double ni : n) {
      for (double ki : k) {
        const auto it = rate.find({mi, ni, ki});
        if (it == rate.end()) {
          throw InputError(
              fmt::format("{}: expected a full grid over m x n x k ({} x {} x {} rows); missing "
                          "[{}, {}, {}, ...]",
                          r.where(rows, key), m.size(), n.size(), k.size(), mi, ni, ki));
        }
        tflops.push_back(it->second);
      }
    }
  }
  return GemmTable(key.substr(key.rfind('.') + 1), m, n, k, tflops);
}

// `gemm`, `gemm_nt`, `gemm_tn`: a map dtype -> grid rows.
std::vector<GemmTable> read_gemm_tables(const YamlReader& r, const YAML::Node& node, const std::string& key,
                                        const std::map<std::string, double>& peak_tflops) {
  if (!node.IsMap() || node.size() == 0) r.fail(node, key, "a map dtype: [[m, n, k, tflops], ...]");
  std::vector<GemmTable> tables;
  for (const auto& entry : node) {
    const std::string dtype = entry.first.Scalar();
    if (dtype != "bf16" && dtype != "fp16" && dtype != "fp32") {
      r.fail(entry.first, key + "." + dtype, "a dtype: bf16, fp16 or fp32");
    }
    const auto peak = peak_tflops.find(dtype);
    tables.push_back(
        read_gemm_table(r, entry.second, key + "." + dtype, peak == peak_tflops.end() ? 0 : peak->second));
  }
  return tables;
}

void read_provenance(const YamlReader& r, const YAML::Node& node, HardwareProfile& p) {
  const std::vector<std::string> keys = {"command", "date", "driver", "host", "notes"};
  std::vector<std::string> allowed = keys;
  allowed.push_back("kind");
  r.expect_map(node, "provenance", allowed);
  for (const std::string& key : keys) {
    if (!node[key]) r.fail(node, "provenance." + key, "a string (where the profile came from)");
    p.provenance[key] = r.get_string(node[key], "provenance." + key);
  }
  // What the figures are: profiles written before `kind` existed say it through their host (n/a: not a
  // machine's measurement, so derived from specifications).
  // spec-derived and fitted-to-published: the kinds' names before they were spec and published.
  if (node["kind"]) {
    std::vector<std::string> choices = names_of(profile_kind_names());
    choices.insert(choices.end(), {"spec-derived", "fitted-to-published"});
    std::string given = r.get_choice(
        node["kind"], "provenance.kind", choices,
        "spec (from data sheets: an upper bound), published (fitted to public measurements) or measured (by "
        "pipesim's microbenchmarks on the machine named in host and device)");
    if (given == "spec-derived") given = "spec";
    if (given == "fitted-to-published") given = "published";
    for (const auto& [name, kind] : profile_kind_names()) {
      if (name == given) p.kind = kind;
    }
  } else {
    p.kind = p.provenance["host"] == "n/a" ? ProfileKind::kSpecDerived : ProfileKind::kMeasured;
  }
}

ProfileFit read_fit(const YamlReader& r, const YAML::Node& node) {
  r.expect_map(
      node, "fit",
      {"gemm_efficiency", "elementwise_efficiency", "attention_efficiency", "host_overhead_us", "source"});
  if (!node["source"]) r.fail(node, "fit.source", "what the terms were fitted to (pipesim calibrate --fit)");
  ProfileFit fit;
  fit.source = r.get_string(node["source"], "fit.source");
  if (fit.source.empty()) r.fail(node["source"], "fit.source", "a non-empty description");
  if (node["gemm_efficiency"])
    fit.gemm_efficiency = r.get_double(node["gemm_efficiency"], "fit.gemm_efficiency", 1e-3);
  if (node["elementwise_efficiency"])
    fit.elementwise_efficiency =
        r.get_double(node["elementwise_efficiency"], "fit.elementwise_efficiency", 1e-3);
  if (node["attention_efficiency"])
    fit.attention_efficiency = r.get_double(node["attention_efficiency"], "fit.attention_efficiency", 1e-3);
  if (node["host_overhead_us"])
    fit.host_overhead_us = r.get_double(node["host_overhead_us"], "fit.host_overhead_us", 0);
  return fit;
}

}  // namespace

namespace {

// The fields `link` gives, over `spec`; the same checks for a whole link and a change of one.
void read_link_fields(const YamlReader& r, const YAML::Node& link, const std::string& key, LinkSpec& spec) {
  if (link["bandwidth_gb_per_s"])
    spec.bandwidth_gb_per_s = r.get_double(link["bandwidth_gb_per_s"], key + ".bandwidth_gb_per_s", 1e-6);
  if (!link["latency_us"]) return;
  spec.latency_us = r.get_double(link["latency_us"], key + ".latency_us", 0);
  // One time value (base/value_ranges.h): the latency is added to every transfer of a run.
  if (spec.latency_us > kMaxTimeMs * 1e3)
    r.fail(link["latency_us"], key + ".latency_us",
           fmt::format("a latency in us from 0 to {:g} (100 s)", kMaxTimeMs * 1e3));
}

}  // namespace

// `link` and `inter_node_link`: the same map, the same checks; errors name `key`.
LinkSpec read_link(const YamlReader& r, const YAML::Node& link, const std::string& key) {
  r.expect_map(link, key, {"bandwidth_gb_per_s", "latency_us", "source"});
  if (!link["bandwidth_gb_per_s"] || !link["latency_us"]) {
    r.fail(link, key, "bandwidth_gb_per_s and latency_us");
  }
  LinkSpec spec;
  read_link_fields(r, link, key, spec);
  if (link["source"]) spec.source = r.get_string(link["source"], key + ".source");
  return spec;
}

LinkSpec read_link_change(const YamlReader& r, const YAML::Node& link, const std::string& key,
                          const LinkSpec& base) {
  r.expect_map(link, key, {"bandwidth_gb_per_s", "latency_us"});
  LinkSpec spec = base;
  read_link_fields(r, link, key, spec);
  for (const auto& [field, value, was] :
       {std::tuple{"bandwidth_gb_per_s", spec.bandwidth_gb_per_s, base.bandwidth_gb_per_s},
        std::tuple{"latency_us", spec.latency_us, base.latency_us}}) {
    if (!link[field]) continue;
    spec.source += fmt::format("; {} {:g} (was {:g}) set by {}", field, value, was,
                               r.where(link[field], fmt::format("{}.{}", key, field)));
  }
  return spec;
}

namespace {

// Every key a profile may have: any other is refused (with a did-you-mean for a typo).
const std::vector<std::string>& profile_allowed_keys() {
  static const std::vector<std::string> keys{"format",
                                             "device",
                                             "provenance",
                                             "peak_tflops",
                                             "memory_bandwidth_gb_per_s",
                                             "memory_capacity_gb",
                                             "launch_overhead_us",
                                             "host_overhead_us",
                                             "elementwise_gb_per_s",
                                             "optimizer_gb_per_s",
                                             "elementwise_ns_per_element",
                                             "update_ns_per_parameter",
                                             "link",
                                             "inter_node_link",
                                             "intra_node_collectives",
                                             "host_to_device",
                                             "device_to_host",
                                             "gemm",
                                             "gemm_nt",
                                             "gemm_tn",
                                             "fp8_gemm",
                                             "fit"};
  return keys;
}

// What the file is, which device it describes and where its figures came from.
void profile_read_identity(const YamlReader& r, const YAML::Node& root, HardwareProfile& p) {
  if (!root["format"] || r.get_string(root["format"], "format") != kFormat) {
    r.fail(root["format"], "format", fmt::format("'{}'", kFormat));
  }
  const YAML::Node device = root["device"];
  if (!device) r.fail(root, "device", "{name: ..., kind: gpu|cpu}");
  r.expect_map(device, "device", {"name", "kind"});
  if (!device["name"]) r.fail(device, "device.name", "the device's name");
  p.device_name = r.get_string(device["name"], "device.name");
  p.device_kind = device["kind"] ? r.get_string(device["kind"], "device.kind") : "";
  if (p.device_kind != "gpu" && p.device_kind != "cpu")
    r.fail(device["kind"], "device.kind", "'gpu' or 'cpu'");
  if (!root["provenance"]) r.fail(root, "provenance", "command, date, driver, host and notes");
  read_provenance(r, root["provenance"], p);
}

// The device's rates and overheads: peaks per dtype, memory, kernel launch and host time, element-wise
// and optimizer passes.
void profile_read_rates(const YamlReader& r, const YAML::Node& root, HardwareProfile& p) {
  if (const YAML::Node peak = root["peak_tflops"]) {
    if (!peak.IsMap()) r.fail(peak, "peak_tflops", "a map dtype: TFLOP/s");
    for (const auto& entry : peak) {
      const std::string dtype = entry.first.Scalar();
      p.peak_tflops[dtype] = r.get_double(entry.second, "peak_tflops." + dtype, 0);
    }
  }
  if (!root["memory_bandwidth_gb_per_s"])
    r.fail(root, "memory_bandwidth_gb_per_s", "the achieved copy bandwidth");
  p.memory_bandwidth_gb_per_s =
      r.get_double(root["memory_bandwidth_gb_per_s"], "memory_bandwidth_gb_per_s", 1e-3);
  if (root["memory_capacity_gb"]) {
    p.memory_capacity_gb = r.get_double(root["memory_capacity_gb"], "memory_capacity_gb", 1e-3);
  }
  if (!root["launch_overhead_us"]) r.fail(root, "launch_overhead_us", "the time to launch one kernel");
  p.launch_overhead_us = r.get_double(root["launch_overhead_us"], "launch_overhead_us", 0);
  if (root["host_overhead_us"])
    p.host_overhead_us = r.get_double(root["host_overhead_us"], "host_overhead_us", 0);
  if (root["elementwise_gb_per_s"])
    p.elementwise_gb_per_s = r.get_double(root["elementwise_gb_per_s"], "elementwise_gb_per_s", 1e-3);
  if (root["optimizer_gb_per_s"])
    p.optimizer_gb_per_s = r.get_double(root["optimizer_gb_per_s"], "optimizer_gb_per_s", 1e-3);
}

// Measured per-kernel costs: ns per element of each element-wise kernel, and each optimizer's update.
void profile_read_kernel_costs(const YamlReader& r, const YAML::Node& root, HardwareProfile& p) {
  if (const YAML::Node kernels = root["elementwise_ns_per_element"]) {
    if (!kernels.IsMap()) r.fail(kernels, "elementwise_ns_per_element", "a map kernel: ns per element");
    for (const auto& entry : kernels) {
      const std::string name = entry.first.Scalar();
      p.elementwise_ns_per_element[name] =
          r.get_double(entry.second, "elementwise_ns_per_element." + name, 0);
    }
  }
  if (const YAML::Node updates = root["update_ns_per_parameter"]) {
    if (!updates.IsMap()) r.fail(updates, "update_ns_per_parameter", "a map optimizer: {step, per_gradient}");
    for (const auto& entry : updates) {
      const std::string key = "update_ns_per_parameter." + entry.first.Scalar();
      r.expect_map(entry.second, key, {"step", "per_gradient"});
      if (!entry.second["step"] || !entry.second["per_gradient"])
        r.fail(entry.second, key, "step and per_gradient");
      p.update_ns_per_parameter[entry.first.Scalar()] = {
          r.get_double(entry.second["step"], key + ".step", 0),
          r.get_double(entry.second["per_gradient"], key + ".per_gradient", 0)};
    }
  }
}

// intra_node_collectives: {ranks: 8, gather_scatter_share: 0.75, source: "...", bus_gb_per_s: [[bytes,
// GB/s], ...]} with the sizes strictly increasing.
std::shared_ptr<const CollectiveCurve> read_collective_curve(const YamlReader& r, const YAML::Node& node) {
  const std::string key = "intra_node_collectives";
  r.expect_map(node, key, {"ranks", "gather_scatter_share", "source", "bus_gb_per_s"});
  if (!node["ranks"] || !node["bus_gb_per_s"]) r.fail(node, key, "ranks and bus_gb_per_s");
  auto curve = std::make_shared<CollectiveCurve>();
  curve->ranks = r.get_int(node["ranks"], key + ".ranks", 2);
  if (node["gather_scatter_share"]) {
    curve->gather_scatter_share =
        r.get_double(node["gather_scatter_share"], key + ".gather_scatter_share", 1e-3);
    if (curve->gather_scatter_share > 1)
      r.fail(node["gather_scatter_share"], key + ".gather_scatter_share", "a share in (0, 1]");
  }
  if (node["source"]) curve->source = r.get_string(node["source"], key + ".source");
  const YAML::Node points = node["bus_gb_per_s"];
  if (!points.IsSequence() || points.size() == 0)
    r.fail(points, key + ".bus_gb_per_s", "a list of [bytes, GB/s] pairs");
  for (size_t i = 0; i < points.size(); ++i) {
    const std::string at = fmt::format("{}.bus_gb_per_s[{}]", key, i);
    if (!points[i].IsSequence()) r.fail(points[i], at, "[bytes, GB/s]");
    const std::vector<double> pair = r.get_double_list(points[i], at, 2, 1e-9);
    if (!curve->bytes.empty() && !(pair[0] > curve->bytes.back()))
      r.fail(points[i], at, fmt::format("a size above the one before ({:g} bytes)", curve->bytes.back()));
    curve->bytes.push_back(pair[0]);
    curve->bus_gb_per_s.push_back(pair[1]);
  }
  return curve;
}

// `fp8_gemm: {speedup_over_bf16: x, source: "..."}`: each bf16 grid (plain and transposed) times x becomes
// the "fp8" grid. At most 2: FP8's dense peak is twice bf16's on Hopper and Blackwell.
void profile_read_fp8_gemm(const YamlReader& r, const YAML::Node& node, HardwareProfile& p) {
  const std::string key = "fp8_gemm";
  r.expect_map(node, key, {"speedup_over_bf16", "source"});
  if (!node["speedup_over_bf16"] || !node["source"])
    r.fail(node, key, "{speedup_over_bf16: x, source: \"the microbenchmark it came from\"}");
  p.fp8_gemm.speedup_over_bf16 = r.get_double(node["speedup_over_bf16"], key + ".speedup_over_bf16", 1);
  if (p.fp8_gemm.speedup_over_bf16 > 2)
    r.fail(node["speedup_over_bf16"], key + ".speedup_over_bf16",
           "at most 2 (FP8's dense peak is twice bf16's): an achieved rate cannot pass it");
  p.fp8_gemm.source = r.get_string(node["source"], key + ".source");
  for (std::vector<GemmTable>* tables : {&p.gemm, &p.gemm_nt, &p.gemm_tn}) {
    for (size_t k = 0; k < tables->size(); ++k) {
      if ((*tables)[k].dtype() != "bf16") continue;
      const GemmTable fp8 = (*tables)[k].scaled(p.fp8_gemm.speedup_over_bf16);
      tables->emplace_back("fp8", fp8.m_sizes(), fp8.n_sizes(), fp8.k_sizes(), fp8.rates());
      break;
    }
  }
  if (p.gemm.empty() || p.gemm.back().dtype() != "fp8")
    r.fail(node, key, "a profile with a bf16 GEMM grid to scale (gemm.bf16)");
}

// The links and the GEMM tables (gemm required; each rate at most its dtype's peak, read before).
void profile_read_links_and_gemms(const YamlReader& r, const YAML::Node& root, HardwareProfile& p) {
  for (const auto& [key, target] :
       {std::pair{"link", &p.link}, std::pair{"inter_node_link", &p.inter_node_link},
        std::pair{"host_to_device", &p.host_to_device}, std::pair{"device_to_host", &p.device_to_host}}) {
    if (const YAML::Node link = root[key]) *target = read_link(r, link, key);
  }
  if (const YAML::Node curve = root["intra_node_collectives"])
    p.intra_node_collectives = read_collective_curve(r, curve);
  const YAML::Node gemm = root["gemm"];
  if (!gemm || !gemm.IsMap() || gemm.size() == 0) {
    r.fail(gemm, "gemm", "a map dtype: [[m, n, k, tflops], ...] with at least one dtype");
  }
  p.gemm = read_gemm_tables(r, gemm, "gemm", p.peak_tflops);
  if (const YAML::Node nt = root["gemm_nt"]) p.gemm_nt = read_gemm_tables(r, nt, "gemm_nt", p.peak_tflops);
  if (const YAML::Node tn = root["gemm_tn"]) p.gemm_tn = read_gemm_tables(r, tn, "gemm_tn", p.peak_tflops);
  if (const YAML::Node fp8 = root["fp8_gemm"]) profile_read_fp8_gemm(r, fp8, p);
}

}  // namespace

HardwareProfile parse_hardware_profile(const std::string& yaml_text, const std::string& source) {
  return parse_hardware_profile(yaml_text, source, ProfileFitUse::kApply);
}

// The sections in a fixed order, so that of two errors the same one is named first.
HardwareProfile parse_hardware_profile(const std::string& yaml_text, const std::string& source,
                                       ProfileFitUse fit_use) {
  YAML::Node root = YamlReader::load(yaml_text, source);
  const YamlReader r(source);
  r.expect_map(root, "", profile_allowed_keys());
  HardwareProfile p;
  p.source = source;
  p.name = std::filesystem::path(source).stem().string();
  profile_read_identity(r, root, p);
  profile_read_rates(r, root, p);
  profile_read_kernel_costs(r, root, p);
  profile_read_links_and_gemms(r, root, p);
  if (const YAML::Node fit = root["fit"]) {
    const ProfileFit terms = read_fit(r, fit);
    if (fit_use == ProfileFitUse::kApply) {
      try {
        return with_fit(p, terms);
      } catch (const InputError& e) {
        r.fail(fit, "fit", e.what());
      }
    }
  }
  return p;
}

// Parsing a profile's YAML dominates a short run, and extrapolate and sweeps load the same file once per run:
// parsed profiles are kept per path, and reused while the file's text is unchanged (a profile rewritten by
// `pipesim calibrate` in the same process is parsed again).
HardwareProfile load_hardware_profile(const std::string& path) {
  struct Parsed {
    std::string text;
    HardwareProfile profile;
  };
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Parsed>> cache;
  constexpr std::size_t kMaxCachedProfiles = 16;
  std::string text = read_text_file(path, "hardware profile");
  {
    const std::lock_guard lock(mutex);
    const auto it = cache.find(path);
    if (it != cache.end() && it->second->text == text) return it->second->profile;
  }
  auto parsed = std::make_shared<const Parsed>(Parsed{text, parse_hardware_profile(text, path)});
  const std::lock_guard lock(mutex);
  if (cache.size() >= kMaxCachedProfiles) cache.clear();
  cache[path] = parsed;
  return parsed->profile;
}

std::string profiles_directory() {
  return find_data_path("profiles", "the shipped hardware profiles");
}

std::string resolve_profile_path(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  if (fs::is_regular_file(name_or_path)) return name_or_path;
  const std::string directory = profiles_directory();  // throws, saying where it looked, when there is none
  const fs::path shipped = fs::path(directory) / (name_or_path + ".yaml");
  if (name_or_path.find('/') == std::string::npos && fs::is_regular_file(shipped)) return shipped.string();
  std::vector<std::string> names;
  if (fs::is_directory(directory)) {
    for (const auto& entry : fs::directory_iterator(directory)) {
      if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw InputError(fmt::format("hardware profile '{}': no such file, and not a profile in {} (there: {}){}",
                               name_or_path, directory, list.empty() ? "none" : list,
                               did_you_mean(name_or_path, names)));
}

}  // namespace pipesim
