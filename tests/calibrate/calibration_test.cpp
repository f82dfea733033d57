// Calibration: the profile writer shared with the CUDA program, fed fake timings, writes a profile pipesim
// reads back with the same figures; the CPU microbenchmarks produce a valid profile; the CUDA program, when
// nvcc built it, either calibrates or says clearly that there is no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/errors.h"
#include "calibrate/cpu_calibrate.h"
#include "calibrate/profile_writer.h"
#include "io/hardware_profile_reader.h"

namespace pipesim {
namespace {

// Rates that depend on every dimension, so a mixed-up index shows.
double fake_tflops(long m, long n, long k) {
  return 100.0 + m / 64.0 + n / 128.0 + k / 256.0;
}

pipesim_profile::ProfileData fake_profile() {
  pipesim_profile::ProfileData p;
  p.device_name = "Fake \"GPU\" \\ 80GB";
  p.device_kind = "gpu";
  p.command = "pipesim-gpu-calibrate -o fake.yaml";
  p.date = "2026-01-02T03:04:05Z";
  p.driver = "CUDA driver 13.0, runtime 13.0";
  p.host = "testhost";
  p.notes = "fake timings\nsecond line";
  p.peak_tflops = {{"bf16", 312}, {"fp32", 195}};  // above every fake rate (the reader refuses one above)
  p.copy = {1e9, 0.01};                            // 2 * 1e9 bytes in 10 ms: 200 GB/s
  p.launch_overhead_s = 3.5e-6;
  p.memory_capacity_bytes = 80.0 * 1024 * 1024 * 1024;  // 80 GiB
  p.has_link = true;
  p.link = {10e-6, 1e8, 10e-6 + 1e-3, "fake p2p"};  // 10 us; 1e8 bytes in 1 ms beyond that: 100 GB/s
  for (const char* dtype : {"bf16", "fp32"}) {
    for (long m : {256, 1024}) {
      for (long n : {128, 512, 2048}) {
        for (long k : {64, 4096}) {
          const double flops = 2.0 * m * n * k;
          p.gemm.push_back({dtype, m, n, k, flops / (fake_tflops(m, n, k) * 1e12)});
        }
      }
    }
  }
  return p;
}

TEST(Calibration, WriterOutputReadsBackWithTheSameFigures) {
  const HardwareProfile p =
      parse_hardware_profile(pipesim_profile::profile_yaml(fake_profile()), "fake.yaml");
  EXPECT_EQ(p.device_name, "Fake \"GPU\" \\ 80GB");
  EXPECT_EQ(p.device_kind, "gpu");
  EXPECT_EQ(p.provenance.at("command"), "pipesim-gpu-calibrate -o fake.yaml");
  EXPECT_EQ(p.provenance.at("date"), "2026-01-02T03:04:05Z");
  EXPECT_EQ(p.provenance.at("notes"), "fake timings\nsecond line");
  EXPECT_EQ(p.peak_tflops.at("fp32"), 195);
  EXPECT_EQ(p.kind, ProfileKind::kMeasured);
  EXPECT_NEAR(p.memory_bandwidth_gb_per_s, 200, 1e-6);
  EXPECT_NEAR(p.launch_overhead_us, 3.5, 1e-9);
  EXPECT_EQ(p.memory_capacity_gb, 80);
  ASSERT_TRUE(p.link.has_value());
  EXPECT_NEAR(p.link->latency_us, 10, 1e-9);
  EXPECT_NEAR(p.link->bandwidth_gb_per_s, 100, 1e-6);
  EXPECT_EQ(p.link->source, "fake p2p");
  for (const char* dtype : {"bf16", "fp32"}) {
    const GemmTable& t = p.gemm_table(dtype);
    EXPECT_EQ(t.m_sizes(), (std::vector<double>{256, 1024}));
    EXPECT_EQ(t.n_sizes(), (std::vector<double>{128, 512, 2048}));
    EXPECT_EQ(t.k_sizes(), (std::vector<double>{64, 4096}));
    for (long m : {256, 1024}) {
      for (long n : {128, 512, 2048}) {
        for (long k : {64, 4096})
          EXPECT_NEAR(t.tflops_at(m, n, k), fake_tflops(m, n, k), 1e-6) << m << n << k;
      }
    }
  }
}

TEST(Calibration, TheOptionalMeasurementsReadBack) {
  pipesim_profile::ProfileData data = fake_profile();
  data.host_overhead_s = 9.25e-6;
  data.elementwise = {4e9, 1e-3};  // 4 GB moved in 1 ms: 4000 GB/s
  data.optimizer = {28e9, 10e-3};  // 2800 GB/s
  data.has_host_links = true;
  data.host_to_device = {5e-6, 1e9, 5e-6 + 20e-3, "fake h2d"};  // 50 GB/s
  data.device_to_host = {6e-6, 1e9, 6e-6 + 25e-3, "fake d2h"};  // 40 GB/s
  for (const char* layout : {"nt", "tn"}) {
    for (long m : {256, 1024}) {
      for (long n : {128, 512, 2048}) {
        for (long k : {64, 4096}) {
          const double flops = 2.0 * m * n * k,
                       tflops = fake_tflops(m, n, k) * (layout[0] == 'n' ? 0.5 : 0.25);
          data.gemm.push_back({"bf16", m, n, k, flops / (tflops * 1e12), layout});
        }
      }
    }
  }
  const std::string yaml = pipesim_profile::profile_yaml(data);
  const HardwareProfile p = parse_hardware_profile(yaml, "fake.yaml");
  EXPECT_NEAR(p.host_overhead_us, 9.25, 1e-9);
  EXPECT_NEAR(p.elementwise_bandwidth_gb_per_s(), 4000, 1e-6);
  EXPECT_NEAR(p.optimizer_bandwidth_gb_per_s(), 2800, 1e-6);
  ASSERT_TRUE(p.host_to_device && p.device_to_host);
  EXPECT_NEAR(p.host_to_device->bandwidth_gb_per_s, 50, 1e-6);
  EXPECT_NEAR(p.device_to_host->latency_us, 6, 1e-9);
  EXPECT_EQ(p.device_to_host->source, "fake d2h");
  EXPECT_NEAR(p.gemm_table("bf16", GemmLayout::kNN).tflops_at(256, 512, 64), fake_tflops(256, 512, 64), 1e-6);
  EXPECT_NEAR(p.gemm_table("bf16", GemmLayout::kNT).tflops_at(256, 512, 64), fake_tflops(256, 512, 64) / 2,
              1e-6);
  EXPECT_NEAR(p.gemm_table("bf16", GemmLayout::kTN).tflops_at(256, 512, 64), fake_tflops(256, 512, 64) / 4,
              1e-6);
  // fp32 has no transposed grids: the plain one stands in.
  EXPECT_EQ(&p.gemm_table("fp32", GemmLayout::kTN), &p.gemm_table("fp32"));
  // Without them, the bandwidths fall back to the copy bandwidth.
  const HardwareProfile plain =
      parse_hardware_profile(pipesim_profile::profile_yaml(fake_profile()), "f.yaml");
  EXPECT_EQ(plain.host_overhead_us, 0);
  EXPECT_NEAR(plain.elementwise_bandwidth_gb_per_s(), 200, 1e-6);
  EXPECT_NEAR(plain.optimizer_bandwidth_gb_per_s(), 200, 1e-6);
  EXPECT_FALSE(plain.host_to_device.has_value());
  EXPECT_TRUE(plain.gemm_nt.empty());
}

TEST(Calibration, WithoutALinkTheProfileHasNone) {
  pipesim_profile::ProfileData data = fake_profile();
  data.has_link = false;
  EXPECT_FALSE(parse_hardware_profile(pipesim_profile::profile_yaml(data), "fake.yaml").link.has_value());
}

TEST(Calibration, AMissingTimingIsCaughtWhenTheProfileIsRead) {
  pipesim_profile::ProfileData data = fake_profile();
  data.gemm.erase(data.gemm.begin() + 3);  // bf16 (256, 512, 4096)
  try {
    parse_hardware_profile(pipesim_profile::profile_yaml(data), "fake.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("missing [256, 512, 4096, ...]"), std::string::npos) << e.what();
  }
}

TEST(Calibration, BlockedGemmComputesTheProduct) {
  const long m = 70, n = 300, k = 130;  // crosses every block boundary
  std::vector<float> a(m * k), b(k * n), c(m * n);
  for (long i = 0; i < m * k; ++i) a[i] = static_cast<float>(i % 7) - 3;
  for (long i = 0; i < k * n; ++i) b[i] = static_cast<float>(i % 5) - 2;
  blocked_gemm(a.data(), b.data(), c.data(), m, n, k);
  for (long i = 0; i < m; ++i) {
    for (long j = 0; j < n; ++j) {
      float expected = 0;
      for (long p = 0; p < k; ++p) expected += a[i * k + p] * b[p * n + j];
      ASSERT_EQ(c[i * n + j], expected) << i << "," << j;  // small integers: exact in fp32
    }
  }
}

TEST(Calibration, CpuCalibrationWritesAProfilePipesimReads) {
  CpuCalibrationOptions options = quick_cpu_calibration();
  options.command = "calibration_test";
  int steps = 0;
  const pipesim_profile::ProfileData data = calibrate_cpu(options, [&](const std::string&) { ++steps; });
  // memcpy, handoff, GEMMs per m, the element-wise kernels, each update
  EXPECT_EQ(steps, 2 + static_cast<int>(options.sizes.size()) + (options.elementwise.empty() ? 0 : 1) +
                       static_cast<int>(options.updates.size()));
  const HardwareProfile p = parse_hardware_profile(pipesim_profile::profile_yaml(data), "cpu.yaml");
  EXPECT_EQ(p.device_kind, "cpu");
  EXPECT_EQ(p.provenance.at("command"), "calibration_test");
  EXPECT_GT(p.memory_bandwidth_gb_per_s, 0);
  EXPECT_GT(p.launch_overhead_us, 0);
  ASSERT_TRUE(p.link.has_value());
  const GemmTable& t = p.gemm_table("fp32");
  EXPECT_EQ(t.m_sizes(), (std::vector<double>{16, 64}));
  EXPECT_EQ(t.k_sizes(), (std::vector<double>{16, 64}));
  EXPECT_THROW(p.gemm_table("bf16"), InputError);
}

TEST(Calibration, CpuCalibrationTimesTheGemmItIsGivenAndNamesIt) {
  CpuCalibrationOptions options = quick_cpu_calibration();
  std::vector<std::array<long, 3>> shapes;
  std::vector<std::string> layouts;
  options.gemm = [&](const std::string& layout, const float*, const float*, float*, long m, long n, long k) {
    shapes.push_back({m, n, k});
    layouts.push_back(layout);
  };
  options.gemm_name = "the test's GEMM";
  options.gemm_layouts = {"nn", "tn"};
  const pipesim_profile::ProfileData data = calibrate_cpu(options, [](const std::string&) {});
  // Every (m, n, k) of the 2 x 2 x 2 grid per layout, each timed warm-ups + repeats times.
  const std::size_t runs = 8u * static_cast<std::size_t>(options.warmups + options.repeats);
  ASSERT_EQ(shapes.size(), 2 * runs);
  EXPECT_EQ(std::count(layouts.begin(), layouts.end(), "tn"), static_cast<long>(runs));
  EXPECT_NE(data.notes.find("GEMM: the test's GEMM"), std::string::npos) << data.notes;
  const HardwareProfile p = parse_hardware_profile(pipesim_profile::profile_yaml(data), "cpu.yaml");
  EXPECT_EQ(p.gemm_tn.size(), 1u);
  EXPECT_TRUE(p.gemm_nt.empty());
}

TEST(Calibration, CpuCalibrationTimesTheKernelsAndUpdatesItIsGiven) {
  CpuCalibrationOptions options = quick_cpu_calibration();
  std::vector<long> sizes;
  int runs = 0;
  options.elementwise = {{"twice", [&](long elements) -> std::function<void()> {
                            sizes.push_back(elements);
                            return [&] { ++runs; };
                          }}};
  std::vector<std::pair<long, int>> update_shapes;
  std::vector<float> weights(16);
  options.update_pages_touched_bytes = 1 << 20;  // the page touch before each update run, small
  options.updates = {
      {"sgd", [&](long parameters, int gradients, CpuOperands* operands) -> std::function<void()> {
         update_shapes.emplace_back(parameters, gradients);
         if (operands) operands->push_back({weights.data(), weights.size() * sizeof(float)});
         return [] {};
       }}};
  const pipesim_profile::ProfileData data = calibrate_cpu(options, [](const std::string&) {});
  EXPECT_EQ(sizes, std::vector<long>{options.elementwise_elements});
  EXPECT_EQ(runs, options.warmups + options.repeats);
  // U is timed summing one gradient and update_gradients of them.
  EXPECT_EQ(update_shapes,
            (std::vector<std::pair<long, int>>{{options.update_parameters, 1},
                                               {options.update_parameters, options.update_gradients}}));
  const HardwareProfile p = parse_hardware_profile(pipesim_profile::profile_yaml(data), "cpu.yaml");
  ASSERT_EQ(p.elementwise_ns_per_element.count("twice"), 1u);
  EXPECT_GE(p.elementwise_ns_per_element.at("twice"), 0);
  ASSERT_EQ(p.update_ns_per_parameter.count("sgd"), 1u);
  EXPECT_GE(p.update_ns_per_parameter.at("sgd").per_gradient_ns, 0);
  EXPECT_NE(data.notes.find("a byte written in every page of 1 MiB before each run"), std::string::npos)
      << data.notes;
}

// A pipeline adds its ops' times, so a kernel's figure is the mean of its runs, the slow ones included: one
// run of 5 sleeping 20 ms makes the figure about 4 ms (the median would be about 0).
TEST(Calibration, CpuKernelsKeepTheMeanOfTheirRunsNotTheMedian) {
  CpuCalibrationOptions options = quick_cpu_calibration();
  options.warmups = 0;
  options.repeats = 5;
  options.rounds = 1;
  options.updates.clear();
  int runs = 0;
  options.elementwise = {{"one_slow_run", [&](long) -> std::function<void()> {
                            return [&] {
                              if (runs++ == 2) std::this_thread::sleep_for(std::chrono::milliseconds(20));
                            };
                          }}};
  const pipesim_profile::ProfileData data = calibrate_cpu(options, [](const std::string&) {});
  ASSERT_EQ(data.elementwise_ns.size(), 1u);
  const double seconds =
      data.elementwise_ns[0].second * 1e-9 * static_cast<double>(options.elementwise_elements);
  EXPECT_GE(seconds, 20e-3 / 5);
  EXPECT_LT(seconds, 20e-3 / 2);  // not the slow run itself
}

#ifdef PIPESIM_GPU_CALIBRATE
// nvcc was found, so the build compiled the CUDA program. Without a GPU it must exit 2 with a clear message;
// with one, a quick calibration must write a profile pipesim reads.
TEST(Calibration, CudaProgramCalibratesOrSaysThereIsNoGpu) {
  const auto dir = std::filesystem::temp_directory_path() / "pipesim_gpu_calibration_test";
  std::filesystem::create_directories(dir);
  const std::string profile = (dir / "gpu.yaml").string(), log = (dir / "log.txt").string();
  const std::string command =
      std::string(PIPESIM_GPU_CALIBRATE) + " --quick --repeats 3 -o " + profile + " > " + log + " 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  if (WEXITSTATUS(status) == 2) {
    EXPECT_NE(text.str().find("pipesim-gpu-calibrate: no CUDA GPU available"), std::string::npos)
        << text.str();
    GTEST_SKIP() << "no GPU here: " << text.str();
  }
  ASSERT_EQ(WEXITSTATUS(status), 0) << text.str();
  const HardwareProfile p = load_hardware_profile(profile);
  EXPECT_EQ(p.device_kind, "gpu");
  for (const char* dtype : {"bf16", "fp16", "fp32"})
    EXPECT_GT(p.gemm_table(dtype).tflops_at(8192, 8192, 8192), 0);
}
#endif

}  // namespace
}  // namespace pipesim
