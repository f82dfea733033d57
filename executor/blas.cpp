#include "executor/blas.h"

#include <cblas.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>

namespace pipesim::executor {
namespace {

CBLAS_TRANSPOSE transpose_of(bool transpose) {
  return transpose ? CblasTrans : CblasNoTrans;
}

}  // namespace

void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, transpose_of(transpose_a), transpose_of(transpose_b), m, n, k, alpha, a, lda, b,
              ldb, beta, c, ldc);
}

void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, double alpha, const double* a, int lda,
          const double* b, int ldb, double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, transpose_of(transpose_a), transpose_of(transpose_b), m, n, k, alpha, a, lda, b,
              ldb, beta, c, ldc);
}

void use_single_blas_thread() {
  openblas_set_num_threads(1);
}

int blas_thread_count() {
  return openblas_get_num_threads();
}

std::string blas_core_name() {
  return openblas_get_corename();
}

bool is_fallback_blas_core(std::string_view core) {
  std::string lower(core);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "prescott" || lower == "core2" || lower == "nehalem";
}

std::string better_blas_core_type() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr || !is_fallback_blas_core(blas_core_name())) return "";
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
    return "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return "";
}

void rerun_with_better_blas_kernels(char** argv) {
  const std::string core = better_blas_core_type();
  if (core.empty()) return;
  if (setenv("OPENBLAS_CORETYPE", core.c_str(), 0) != 0) return;
  setenv(kBlasCoreChosenMarker, "1", 1);
  execv("/proc/self/exe", argv);
  unsetenv("OPENBLAS_CORETYPE");  // the exec failed: go on with the kernels OpenBLAS chose
  unsetenv(kBlasCoreChosenMarker);
}

}  // namespace pipesim::executor
