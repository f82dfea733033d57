// Hardware profiles: the reader rejects malformed files with file:line:key errors; GEMM interpolation is
// exact at grid points, monotone between them, and behaves as documented outside the grid.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>

#include "base/errors.h"
#include "io/hardware_profile_reader.h"
#include "io/scenario.h"
#include "pipesim_source_dir.h"
#include "tests/error_text.h"
#include "tests/scenario_text.h"
#include "tests/temp_dir.h"

namespace pipesim {
namespace {

// A 2 x 2 x 2 grid over {256, 4096}: the rate doubles with m, grows by half with n, by a quarter with k.
const char* kValid = R"(format: pipesim-hardware-profile-1
device: {name: "Test GPU", kind: gpu}
provenance: {command: "by hand", date: "2026-01-01", driver: "none", host: "here", notes: "test"}
peak_tflops: {bf16: 100}
memory_bandwidth_gb_per_s: 1000
launch_overhead_us: 5
link: {bandwidth_gb_per_s: 50, latency_us: 10, source: "made up"}
gemm:
  bf16:
    - [256, 256, 256, 10]
    - [256, 256, 4096, 12.5]
    - [256, 4096, 256, 15]
    - [256, 4096, 4096, 17.5]
    - [4096, 256, 256, 20]
    - [4096, 256, 4096, 22.5]
    - [4096, 4096, 256, 25]
    - [4096, 4096, 4096, 27.5]
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

std::string profile_error_of(const std::string& yaml) {
  return test::input_error_of([&] { parse_hardware_profile(yaml, "p.yaml"); });
}

// fp8_gemm: each bf16 grid times the stated multiple becomes the "fp8" grid, exact at the grid points; a
// multiple above FP8's peak over bf16's (2) or without a bf16 grid to scale is refused, naming the key.
TEST(HardwareProfile, AnFp8RateScalesTheBf16Grid) {
  const std::string with =
      replaced(kValid, "gemm:\n", "fp8_gemm: {speedup_over_bf16: 1.5, source: \"test\"}\ngemm:\n");
  const HardwareProfile p = parse_hardware_profile(with, "p.yaml");
  EXPECT_DOUBLE_EQ(p.fp8_gemm.speedup_over_bf16, 1.5);
  EXPECT_EQ(p.fp8_gemm.source, "test");
  EXPECT_DOUBLE_EQ(p.gemm_table("fp8").tflops_at(256, 4096, 256), 1.5 * 15);
  EXPECT_DOUBLE_EQ(p.gemm_table("fp8").tflops_at(4096, 4096, 4096), 1.5 * 27.5);
  EXPECT_NE(
      profile_error_of(replaced(with, "speedup_over_bf16: 1.5", "speedup_over_bf16: 2.5")).find("at most 2"),
      std::string::npos);
  EXPECT_NE(profile_error_of(replaced(with, "  bf16:", "  fp16:")).find("fp8_gemm"), std::string::npos);
  EXPECT_NE(profile_error_of(replaced(with, ", source: \"test\"", "")).find("source"), std::string::npos);
}

TEST(HardwareProfile, ReadsEveryField) {
  const HardwareProfile p = parse_hardware_profile(kValid, "dir/test-gpu.yaml");
  EXPECT_EQ(p.name, "test-gpu");
  EXPECT_EQ(p.device_name, "Test GPU");
  EXPECT_EQ(p.device_kind, "gpu");
  EXPECT_EQ(p.provenance.at("command"), "by hand");
  EXPECT_EQ(p.peak_tflops.at("bf16"), 100);
  EXPECT_EQ(p.memory_bandwidth_gb_per_s, 1000);
  EXPECT_EQ(p.launch_overhead_us, 5);
  ASSERT_TRUE(p.link.has_value());
  EXPECT_EQ(p.link->bandwidth_gb_per_s, 50);
  EXPECT_EQ(p.link->latency_us, 10);
  EXPECT_EQ(p.gemm_table("bf16").m_sizes(), (std::vector<double>{256, 4096}));
}

// Loads are cached per path while the file's text is unchanged: a rewritten profile is read anew.
TEST(HardwareProfile, ARewrittenProfileFileIsReadAgain) {
  const test::TempDir dir;
  const std::string path = dir.write("gpu.yaml", kValid);
  EXPECT_EQ(load_hardware_profile(path).memory_bandwidth_gb_per_s, 1000);
  EXPECT_EQ(load_hardware_profile(path).memory_bandwidth_gb_per_s, 1000);
  dir.write("gpu.yaml",
            replaced(kValid, "memory_bandwidth_gb_per_s: 1000", "memory_bandwidth_gb_per_s: 1500"));
  EXPECT_EQ(load_hardware_profile(path).memory_bandwidth_gb_per_s, 1500);
  dir.write("gpu.yaml", replaced(kValid, "peak_tflops: {bf16: 100}", "peak_tflops: {bf16: -1}"));
  EXPECT_THROW(load_hardware_profile(path), InputError);
}

TEST(HardwareProfile, InterpolationIsExactAtGridPoints) {
  const HardwareProfile profile = parse_hardware_profile(kValid, "p.yaml");
  const GemmTable& t = profile.gemm_table("bf16");
  EXPECT_DOUBLE_EQ(t.tflops_at(256, 256, 256), 10);
  EXPECT_DOUBLE_EQ(t.tflops_at(4096, 256, 4096), 22.5);
  EXPECT_DOUBLE_EQ(t.tflops_at(4096, 4096, 4096), 27.5);
  EXPECT_DOUBLE_EQ(t.seconds(4096, 4096, 4096), 2.0 * 4096 * 4096 * 4096 / 27.5e12);
}

TEST(HardwareProfile, InterpolationIsLogLinearAndMonotone) {
  const HardwareProfile profile = parse_hardware_profile(kValid, "p.yaml");
  const GemmTable& t = profile.gemm_table("bf16");
  // 1024 is halfway between 256 and 4096 on a log scale.
  EXPECT_DOUBLE_EQ(t.tflops_at(1024, 256, 256), 15);
  EXPECT_DOUBLE_EQ(t.tflops_at(1024, 1024, 1024), 10 + 5 + 2.5 + 1.25);
  double previous = 0;
  for (double x = 256; x <= 4096; x *= 1.07) {
    const double rate = t.tflops_at(x, 0.5 * x + 128, 4352 - x);  // m and n grow, k shrinks by less
    EXPECT_GE(rate, previous) << x;
    previous = rate;
  }
  for (double m = 256; m <= 4096; m *= 1.1)
    EXPECT_LE(t.tflops_at(m, 700, 700), t.tflops_at(m * 1.1, 700, 700));
}

TEST(HardwareProfile, OutsideTheGrid) {
  const HardwareProfile profile = parse_hardware_profile(kValid, "p.yaml");
  const GemmTable& t = profile.gemm_table("bf16");
  EXPECT_DOUBLE_EQ(t.tflops_at(1 << 20, 4096, 4096), 27.5);  // above: the edge rate
  // Below: the rate falls with the size, so the time does not: a 128-row GEMM takes as long as a 256-row one.
  EXPECT_DOUBLE_EQ(t.tflops_at(128, 256, 256), 5);
  EXPECT_DOUBLE_EQ(t.seconds(128, 256, 256), t.seconds(256, 256, 256));
}

TEST(HardwareProfile, ReadsNcclsMeasuredCollectiveCurve) {
  const std::string link = "link: {bandwidth_gb_per_s: 50, latency_us: 10, source: \"made up\"}";
  const auto with_curve = [&](const std::string& curve) {
    return replaced(kValid, link, link + "\nintra_node_collectives: " + curve);
  };
  const HardwareProfile p = parse_hardware_profile(
      with_curve("{ranks: 8, gather_scatter_share: 0.75, source: \"sweep\", bus_gb_per_s: [[1e6, 20], "
                 "[1e8, 200]]}"),
      "p.yaml");
  ASSERT_NE(p.intra_node_collectives, nullptr);
  EXPECT_EQ(p.intra_node_collectives->ranks, 8);
  EXPECT_EQ(p.intra_node_collectives->gather_scatter_share, 0.75);
  EXPECT_EQ(p.intra_node_collectives->source, "sweep");
  EXPECT_EQ(p.intra_node_collectives->bytes, (std::vector<double>{1e6, 1e8}));
  EXPECT_NEAR(p.intra_node_collectives->bus_gb_per_s_at(1e7, 8), std::sqrt(20.0 * 200), 1e-12);
  EXPECT_EQ(parse_hardware_profile(kValid, "p.yaml").intra_node_collectives, nullptr);
  EXPECT_EQ(profile_error_of(with_curve("{ranks: 8, bus_gb_per_s: [[1e8, 20], [1e6, 200]]}")),
            "p.yaml:8: key 'intra_node_collectives.bus_gb_per_s[1]': expected a size above the one before "
            "(1e+08 bytes), got [1e6, 200]");
  EXPECT_EQ(profile_error_of(with_curve("{ranks: 8, bus_gb_per_s: [[1e6, 0]]}")),
            "p.yaml:8: key 'intra_node_collectives.bus_gb_per_s[0][1]': expected a number >= 1e-09, got '0'");
  EXPECT_EQ(profile_error_of(with_curve("{ranks: 8, gather_scatter_share: 2, bus_gb_per_s: [[1, 1]]}")),
            "p.yaml:8: key 'intra_node_collectives.gather_scatter_share': expected a share in (0, 1], got "
            "'2'");
  EXPECT_EQ(
      profile_error_of(with_curve("{bus_gb_per_s: [[1, 1]]}")),
      "p.yaml:8: key 'intra_node_collectives': expected ranks and bus_gb_per_s, got {bus_gb_per_s: [[1, "
      "1]]}");
}

TEST(HardwareProfile, MalformedProfilesGiveClearErrors) {
  EXPECT_EQ(profile_error_of(replaced(kValid, "pipesim-hardware-profile-1", "v0")),
            "p.yaml:1: key 'format': expected 'pipesim-hardware-profile-1', got 'v0'");
  EXPECT_EQ(profile_error_of(replaced(kValid, "launch_overhead_us: 5", "launch_overhead_us: 5\nspeed: 3")),
            "p.yaml:7: key 'speed': unknown key; allowed here: format, device, provenance, peak_tflops, "
            "memory_bandwidth_gb_per_s, memory_capacity_gb, launch_overhead_us, host_overhead_us, "
            "elementwise_gb_per_s, optimizer_gb_per_s, elementwise_ns_per_element, update_ns_per_parameter, "
            "link, inter_node_link, intra_node_collectives, host_to_device, device_to_host, "
            "gemm, gemm_nt, gemm_tn, fp8_gemm, fit");
  EXPECT_EQ(profile_error_of(replaced(kValid, "    - [4096, 4096, 256, 25]\n", "")),
            "p.yaml:10: key 'gemm.bf16': expected a full grid over m x n x k (2 x 2 x 2 rows); missing "
            "[4096, 4096, 256, ...]");
  EXPECT_EQ(profile_error_of(replaced(kValid, "[256, 256, 4096, 12.5]", "[256, 256, 256, 12.5]")),
            "p.yaml:11: key 'gemm.bf16[1]': expected each (m, n, k) once; (256, 256, 256) repeats, got "
            "[256, 256, 256, 12.5]");
  EXPECT_EQ(profile_error_of(replaced(kValid, "[256, 256, 256, 10]", "[256, 256, 256, 0]")),
            "p.yaml:10: key 'gemm.bf16[0].tflops': expected an achieved rate > 0, got '0'");
  EXPECT_EQ(profile_error_of(replaced(kValid, "[256, 256, 256, 10]", "[256, 256, 10]")),
            "p.yaml:10: key 'gemm.bf16[0]': expected [m, n, k, tflops], got [256, 256, 10]");
  EXPECT_EQ(profile_error_of(replaced(kValid, "  bf16:", "  int8:")),
            "p.yaml:9: key 'gemm.int8': expected a dtype: bf16, fp16 or fp32, got 'int8'");
  EXPECT_EQ(profile_error_of(replaced(kValid, "kind: gpu", "kind: tpu")),
            "p.yaml:2: key 'device.kind': expected 'gpu' or 'cpu', got 'tpu'");
  EXPECT_EQ(profile_error_of(
                replaced(kValid, "memory_bandwidth_gb_per_s: 1000", "memory_bandwidth_gb_per_s: fast")),
            "p.yaml:5: key 'memory_bandwidth_gb_per_s': expected a number >= 0.001, got 'fast'");
  EXPECT_EQ(profile_error_of(replaced(kValid, "host: \"here\", ", "")),
            "p.yaml:3: key 'provenance.host': expected a string (where the profile came from), got "
            "{command: by hand, date: 2026-01-01, driver: none, notes: test}");
  EXPECT_EQ(profile_error_of("format: ["), "p.yaml:1: not valid YAML: end of sequence flow not found");
}

// A GEMM faster than the profile's own peak would print an MFU over 100 %: refused where it is written.
TEST(HardwareProfile, AGemmAboveThePeakIsRefusedWithItsLine) {
  EXPECT_EQ(
      profile_error_of(replaced(kValid, "[4096, 4096, 4096, 27.5]", "[4096, 4096, 4096, 522]")),
      "p.yaml:17: key 'gemm.bf16[7].tflops': expected an achieved rate at most the profile's "
      "peak_tflops.bf16 (100 TFLOP/s), got 522: a GEMM above the peak would give an MFU over 100 %, got "
      "'522'");
  // Without a stated peak nothing bounds the table.
  EXPECT_NO_THROW(parse_hardware_profile(
      replaced(replaced(kValid, "peak_tflops: {bf16: 100}\n", ""), "27.5]", "522]"), "p.yaml"));
}

// What the figures are, said beside them: measured on a named machine, fitted, or from data sheets.
TEST(HardwareProfile, ItsKindIsReadOrDerivedFromItsHost) {
  EXPECT_EQ(parse_hardware_profile(kValid, "p.yaml").kind_text(),
            "measured on Test GPU (host here, 2026-01-01)");
  const std::string spec = replaced(kValid, "host: \"here\"", "host: \"n/a\"");
  EXPECT_EQ(parse_hardware_profile(spec, "p.yaml").kind_text(), "spec: data-sheet figures, an upper bound");
  const std::string fitted = replaced(kValid, "notes: \"test\"", "notes: \"test\", kind: published");
  EXPECT_EQ(parse_hardware_profile(fitted, "p.yaml").kind, ProfileKind::kFittedToPublished);
  EXPECT_EQ(parse_hardware_profile(fitted, "p.yaml").kind_text(), "published: fitted to public measurements");
  // The kinds' earlier names still read.
  for (const auto& [old_name, kind] : {std::pair{"spec-derived", ProfileKind::kSpecDerived},
                                       std::pair{"fitted-to-published", ProfileKind::kFittedToPublished}}) {
    const std::string text =
        replaced(kValid, "notes: \"test\"", std::string("notes: \"test\", kind: ") + old_name);
    EXPECT_EQ(parse_hardware_profile(text, "p.yaml").kind, kind) << old_name;
  }
  const std::string error =
      profile_error_of(replaced(kValid, "notes: \"test\"", "notes: \"test\", kind: mesured"));
  EXPECT_NE(error.find("key 'provenance.kind'"), std::string::npos) << error;
  EXPECT_NE(error.find("did you mean 'measured'"), std::string::npos) << error;
  // Every shipped profile says its kind.
  for (const char* name : {"h100-sxm5-80gb-spec", "h200-sxm-141gb-spec", "rtx-pro-6000-blackwell-maxq"}) {
    EXPECT_EQ(load_hardware_profile(resolve_profile_path(name)).kind, ProfileKind::kSpecDerived) << name;
  }
  for (const char* name : {"a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb", "h800-sxm5-80gb"}) {
    EXPECT_EQ(load_hardware_profile(resolve_profile_path(name)).kind, ProfileKind::kFittedToPublished)
        << name;
  }
  EXPECT_EQ(load_hardware_profile(resolve_profile_path("nvidia-h200")).kind, ProfileKind::kMeasured);
}

TEST(HardwareProfile, TheLinkIsOptional) {
  const std::string no_link =
      replaced(kValid, "link: {bandwidth_gb_per_s: 50, latency_us: 10, source: \"made up\"}\n", "");
  EXPECT_FALSE(parse_hardware_profile(no_link, "p.yaml").link.has_value());
  EXPECT_EQ(profile_error_of(replaced(kValid, "bandwidth_gb_per_s: 50, ", "")),
            "p.yaml:7: key 'link': expected bandwidth_gb_per_s and latency_us, got "
            "{latency_us: 10, source: made up}");
}

// inter_node_link has link's form and checks; errors name its keys. The shipped A100 profile has none.
TEST(HardwareProfile, TheInterNodeLinkIsOptionalAndCheckedAsTheLinkIs) {
  const std::string with =
      replaced(kValid, "gemm:\n",
               "inter_node_link: {bandwidth_gb_per_s: 45, latency_us: 25, source: \"NDR\"}\ngemm:\n");
  const HardwareProfile p = parse_hardware_profile(with, "p.yaml");
  ASSERT_TRUE(p.inter_node_link.has_value());
  EXPECT_EQ(p.inter_node_link->bandwidth_gb_per_s, 45);
  EXPECT_EQ(p.inter_node_link->latency_us, 25);
  EXPECT_EQ(p.inter_node_link->source, "NDR");
  ASSERT_TRUE(p.link.has_value());
  EXPECT_EQ(p.link->bandwidth_gb_per_s, 50);  // the stage-to-stage link is its own
  EXPECT_FALSE(parse_hardware_profile(kValid, "p.yaml").inter_node_link.has_value());
  EXPECT_FALSE(load_hardware_profile(resolve_profile_path("a100-sxm4-80gb")).inter_node_link.has_value());

  for (const auto& [from, to, expected] :
       {std::tuple<std::string, std::string, std::string>{
            "bandwidth_gb_per_s: 45", "bandwidth_gb_per_s: -45",
            "p.yaml:8: key 'inter_node_link.bandwidth_gb_per_s': expected a number >= "},
        {"latency_us: 25, ", "",
         "p.yaml:8: key 'inter_node_link': expected bandwidth_gb_per_s and latency_us"},
        {"latency_us: 25", "latency_us: 1e9",
         "p.yaml:8: key 'inter_node_link.latency_us': expected a latency"},
        {"source: \"NDR\"", "sorce: \"NDR\"", "p.yaml:8: key 'inter_node_link.sorce': unknown key"}}) {
    const std::string message = profile_error_of(replaced(with, from, to));
    EXPECT_TRUE(message.starts_with(expected)) << message;
  }
}

TEST(HardwareProfile, MissingDtypeNamesTheProfileAndWhatItHas) {
  const HardwareProfile p = parse_hardware_profile(kValid, "p.yaml");
  try {
    p.gemm_table("fp32");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "p.yaml: hardware profile has no GEMM measurements for dtype 'fp32' (it has: bf16)");
  }
}

TEST(HardwareProfile, UnknownProfileNameListsTheShippedOnes) {
  try {
    resolve_profile_path("no-such-gpu");
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("hardware profile 'no-such-gpu': no such file"), std::string::npos) << message;
    EXPECT_NE(message.find("a100-sxm4-80gb"), std::string::npos) << message;
  }
}

TEST(HardwareProfile, ShippedA100ProfileLoads) {
  const HardwareProfile p = load_hardware_profile(resolve_profile_path("a100-sxm4-80gb"));
  EXPECT_EQ(p.device_name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(p.memory_capacity_gb, 80);
  for (const char* dtype : {"bf16", "fp16", "fp32"}) {
    const GemmTable& t = p.gemm_table(dtype);
    EXPECT_LE(t.tflops_at(1 << 16, 1 << 16, 1 << 16), p.peak_tflops.at(dtype)) << dtype;
    EXPECT_LT(t.tflops_at(1024, 1024, 1024), t.tflops_at(8192, 8192, 8192)) << dtype;
  }
}

// The spec-derived RTX PRO 6000 Blackwell Max-Q profile agrees with the derivation its notes state
// (calibrate/gpu/spec_rtx_pro_6000.py).
TEST(HardwareProfile, RtxPro6000MaxQProfileFollowsItsStatedDerivation) {
  const HardwareProfile p = load_hardware_profile(resolve_profile_path("rtx-pro-6000-blackwell-maxq"));
  EXPECT_NE(p.provenance.at("notes").find("Not a measurement"), std::string::npos);
  // FP32: 24064 CUDA cores x 2 FLOP x 2.288 GHz. Dense BF16: 4000 AI TOPS (FP4, sparse) / 8 at the
  // Workstation Edition's 125 TFLOPS FP32 clock, scaled to the Max-Q's; also 188 SMs x 1024 FLOP/clock.
  const double fp32 = 24064 * 2 * 2.288e-3;
  const double bf16 = 4000.0 / 8 * fp32 / 125;
  EXPECT_NEAR(p.peak_tflops.at("fp32"), fp32, 0.05);
  EXPECT_NEAR(p.peak_tflops.at("bf16"), bf16, 0.05);
  EXPECT_NEAR(p.peak_tflops.at("fp16"), bf16, 0.05);
  EXPECT_NEAR(bf16, 188 * 1024 * 2.288e-3, 0.5);
  EXPECT_EQ(p.memory_capacity_gb, 96);
  EXPECT_EQ(p.memory_bandwidth_gb_per_s, 1792);  // 512 bits x 28 Gbps / 8
  ASSERT_TRUE(p.link.has_value());
  EXPECT_LT(p.link->bandwidth_gb_per_s, 32 * 16 * 128.0 / 130 / 8);  // below PCIe 5.0 x16's 63 GB/s
  // The grid is the A100 fit's curve at this peak: e_max 0.86, k_half 128, tiles_half 60 x 188/108.
  auto curve = [&](double peak, double m, double n, double k) {
    const double tiles = m * n / (128.0 * 128.0), tiles_half = 60.0 * 188 / 108;
    return peak * 0.86 * tiles / (tiles + tiles_half) * k / (k + 128);
  };
  for (const char* dtype : {"bf16", "fp32"}) {
    const GemmTable& t = p.gemm_table(dtype);
    const double peak = std::string(dtype) == "bf16" ? bf16 : fp32;
    for (const auto& [m, n, k] :
         {std::tuple{128.0, 128.0, 128.0}, {4096.0, 1024.0, 256.0}, {65536.0, 65536.0, 65536.0}}) {
      EXPECT_NEAR(t.tflops_at(m, n, k), curve(peak, m, n, k), 1e-3 * curve(peak, m, n, k))
          << dtype << " " << m;
    }
  }
}

// The spec-derived H100 SXM5 and H200 SXM profiles (calibrate/gpu/spec_profile.py): the A100 fit's curve at
// the dense peak, the same compute on both, the H200's faster and larger HBM3e, and a link between nodes.
TEST(HardwareProfile, SpecDerivedHopperProfilesFollowTheirStatedDerivation) {
  const HardwareProfile h100 = load_hardware_profile(resolve_profile_path("h100-sxm5-80gb-spec"));
  const HardwareProfile h200 = load_hardware_profile(resolve_profile_path("h200-sxm-141gb-spec"));
  // Dense bf16: half the data sheets' 1979 TFLOP/s (2:4 sparse). The curve's tiles_half: 60 x 132/108 SMs.
  constexpr double peak = 989.4;
  auto curve = [](double m, double n, double k) {
    const double tiles = m * n / (128.0 * 128.0), tiles_half = 60.0 * 132 / 108;
    return peak * 0.86 * tiles / (tiles + tiles_half) * k / (k + 128);
  };
  for (const HardwareProfile* p : {&h100, &h200}) {
    EXPECT_TRUE(p->provenance.at("notes").starts_with("Not a measurement: spec-derived.")) << p->name;
    EXPECT_NEAR(p->peak_tflops.at("bf16"), peak, 0.05) << p->name;
    EXPECT_NEAR(p->peak_tflops.at("fp16"), peak, 0.05) << p->name;
    EXPECT_NEAR(p->peak_tflops.at("fp32"), 66.9, 0.05) << p->name;
    const double large = p->gemm_table("bf16").tflops_at(8192, 8192, 8192);
    EXPECT_LT(large, peak) << p->name;
    EXPECT_GT(large, 0.6 * peak) << p->name;
    EXPECT_NEAR(large, curve(8192, 8192, 8192), 1e-3 * large) << p->name;
    ASSERT_TRUE(p->link.has_value()) << p->name;
    EXPECT_LT(p->link->bandwidth_gb_per_s, 450) << p->name;  // NVLink 4: 450 GB/s per direction
    ASSERT_TRUE(p->inter_node_link.has_value()) << p->name;
    EXPECT_LT(p->inter_node_link->bandwidth_gb_per_s, 400 / 8.0) << p->name;  // one NDR NIC: 400 Gb/s
    EXPECT_GT(p->inter_node_link->latency_us, p->link->latency_us) << p->name;
  }
  EXPECT_DOUBLE_EQ(h100.gemm_table("bf16").tflops_at(4096, 1024, 256),
                   h200.gemm_table("bf16").tflops_at(4096, 1024, 256));
  // HBM3e at 4.8 TB/s against HBM3 at 3.35; both achieved figures below the data sheets'.
  EXPECT_GT(h200.memory_bandwidth_gb_per_s, h100.memory_bandwidth_gb_per_s);
  EXPECT_LT(h100.memory_bandwidth_gb_per_s, 3350);
  EXPECT_LT(h200.memory_bandwidth_gb_per_s, 4800);
  // GiB: the totals CUDA reports, in MiB / 1024.
  EXPECT_NEAR(h100.memory_capacity_gb, 81559 / 1024.0, 0.01);
  EXPECT_NEAR(h200.memory_capacity_gb, 143771 / 1024.0, 0.01);
}

// The published Hopper profiles (calibrate/gpu/published_profile.py), worked from the microbenchmark rows
// they name: e_max = 0.86 x (794.5 / 989) / (271.2 / 312), k_half 260, memory 2039 x 2522.9 / 1581.0 GB/s,
// NCCL's all-reduce curve of 8 H200 (the H800's scaled to its 160 GB/s NVLink), all-gathers at 0.754 of it.
TEST(HardwareProfile, PublishedHopperProfilesFollowTheirStatedFit) {
  const HardwareProfile h100 = load_hardware_profile(resolve_profile_path("h100-sxm5-80gb"));
  const HardwareProfile h800 = load_hardware_profile(resolve_profile_path("h800-sxm5-80gb"));
  const HardwareProfile spec = load_hardware_profile(resolve_profile_path("h100-sxm5-80gb-spec"));
  const double e_max = 0.86 * (794.5 / 989) / (271.2 / 312);
  const auto curve = [&](double m, double n, double k) {
    const double tiles = m * n / (128.0 * 128.0), tiles_half = 60.0 * 132 / 108;
    return 989.4 * e_max * tiles / (tiles + tiles_half) * k / (k + 260);
  };
  for (const HardwareProfile* p : {&h100, &h800}) {
    EXPECT_NEAR(p->gemm_table("bf16").tflops_at(8192, 8192, 8192), curve(8192, 8192, 8192), 0.01) << p->name;
    EXPECT_NEAR(p->gemm_table("bf16").tflops_at(4096, 1024, 256), curve(4096, 1024, 256), 0.01) << p->name;
    EXPECT_NEAR(p->memory_bandwidth_gb_per_s, 2039 * 2522.9 / 1581.0, 1) << p->name;
    ASSERT_NE(p->intra_node_collectives, nullptr) << p->name;
    EXPECT_NEAR(p->intra_node_collectives->gather_scatter_share, (361.4 + 362.9) / 2 / 480.0, 1e-4);
  }
  // Below the data sheet's rates everywhere: a GEMM, the HBM, the NVLink.
  EXPECT_LT(h100.gemm_table("bf16").tflops_at(8192, 8192, 8192),
            spec.gemm_table("bf16").tflops_at(8192, 8192, 8192));
  EXPECT_LT(h100.memory_bandwidth_gb_per_s, 3350);
  // nccl-tests' bus bandwidth at a measured size, and the H800's curve at its NVLink's share.
  EXPECT_NEAR(h100.intra_node_collectives->bus_gb_per_s_at(67108864, 8), 346.51, 0.01);
  EXPECT_NEAR(h100.intra_node_collectives->bus_gb_per_s_at(17179869184, 8), 482.26, 0.01);
  const double h800_share = h800.link->bandwidth_gb_per_s / h100.link->bandwidth_gb_per_s;
  EXPECT_NEAR(h800_share, 160 / 374.57, 2e-3);
  EXPECT_NEAR(h800.intra_node_collectives->bus_gb_per_s_at(67108864, 8), 346.51 * h800_share, 0.5);
  // On every shipped curve an all-reduce's time never falls as its buffer grows.
  for (const char* name : {"a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb", "h800-sxm5-80gb"}) {
    const HardwareProfile p = load_hardware_profile(resolve_profile_path(name));
    ASSERT_NE(p.intra_node_collectives, nullptr) << name;
    double before = 0;
    for (double n = 1e3; n < 1e11; n *= 1.3) {
      const double seconds = n / p.intra_node_collectives->bus_gb_per_s_at(n, 8);
      EXPECT_GE(seconds, before * (1 - 1e-12)) << name << " at " << n << " bytes";
      before = seconds;
    }
  }
}

// Issue 47: `--set hardware.link.bandwidth_gb_per_s=100` made hardware.link a map without its other fields
// and source, which was refused. A map without a source changes those fields of the profile's link, keeps the
// others, and its source records the change.
TEST(HardwareProfile, ASetChangesOneFieldOfTheProfilesLink) {
  const std::string path =
      std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/transformer/llama3-70b-h100.yaml";
  const Scenario base = load_scenario(path);
  const Scenario changed = load_scenario(path, {"hardware.link.bandwidth_gb_per_s=100"});
  const LinkSpec& before = *base.transformer->profile.link;
  const LinkSpec& after = *changed.transformer->profile.link;
  EXPECT_EQ(after.bandwidth_gb_per_s, 100);
  EXPECT_EQ(after.latency_us, before.latency_us);
  EXPECT_EQ(
      after.source,
      fmt::format("{}; bandwidth_gb_per_s 100 (was {:g}) set by --set hardware.link.bandwidth_gb_per_s: key "
                  "'hardware.link.bandwidth_gb_per_s'",
                  before.source, before.bandwidth_gb_per_s));
  EXPECT_DOUBLE_EQ(changed.comm.bandwidth_bytes_per_ns, 100);  // the run's comm is the changed link
  // Its values are checked as a whole link's are; a profile without that link has no field to change.
  EXPECT_NE(test::input_error_of([&] {
              load_scenario(path, {"hardware.link.latency_us=1e9"});
            }).find("hardware.link.latency_us': expected a latency in us from 0 to 1e+08"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([&] {
              load_scenario(path, {"hardware.link.bandwith_gb_per_s=1"});
            }).find("bandwith_gb_per_s"),
            std::string::npos);
}

}  // namespace
}  // namespace pipesim

namespace pipesim {
namespace {

// A transformer scenario on a profile with no peer link: with host <-> device copies measured, the stages'
// transfers go through host memory; with neither, the scenario must name a link.
TEST(HardwareProfile, ScenariosWithoutAPeerLinkUseTheHostStagedPath) {
  const test::TempDir dir;
  std::string no_link = kValid;
  no_link.replace(no_link.find("link: {"),
                  no_link.find('\n', no_link.find("link: {")) + 1 - no_link.find("link: {"), "");
  const std::string staged =
      dir.write("staged.yaml", no_link +
                                   "device_to_host: {bandwidth_gb_per_s: 40, latency_us: 6, source: d2h}\n"
                                   "host_to_device: {bandwidth_gb_per_s: 60, latency_us: 4, source: h2d}\n");
  const std::string isolated = dir.write("isolated.yaml", no_link);
  const auto scenario_on = [](const std::string& profile) {
    return fmt::format(
        "model: {{layers: 4, hidden: 256, heads: 4, seq_len: 128, vocab: 1000}}\n"
        "hardware: {{profile: {}}}\n"
        "pipeline: {{stages: 2, microbatches: 4}}\n",
        profile);
  };
  const Scenario s = test::scenario_from_yaml(scenario_on(staged));
  EXPECT_EQ(s.comm.model, CommSpec::Model::kLink);
  EXPECT_DOUBLE_EQ(s.comm.bandwidth_bytes_per_ns, 24);  // 1 / (1/40 + 1/60)
  EXPECT_EQ(s.comm.latency_ns.at(0), 10'000);
  const std::string error = test::input_error_of([&] { test::scenario_from_yaml(scenario_on(isolated)); });
  EXPECT_NE(error.find("neither a peer link nor host <-> device copies"), std::string::npos) << error;
}

}  // namespace
}  // namespace pipesim
