#include "executor/blas.h"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

// LAPACK's symmetric eigensolver, which OpenBLAS carries (Fortran calling convention, column-major).
extern "C" void dsyev_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
                       double* work, const int* lwork, int* info);

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

void symmetric_eigenvectors(int n, double* a, double* eigenvalues) {
  if (n <= 0) return;
  // Row-major symmetric == column-major symmetric: LAPACK reads the same matrix. It returns eigenvalues
  // ascending and eigenvectors as its columns (column-major), i.e. as rows of the row-major buffer.
  int lwork = -1;
  int info = 0;
  double query = 0;
  dsyev_("V", "U", &n, a, &n, eigenvalues, &query, &lwork, &info);
  lwork = std::max(1, static_cast<int>(query));
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dsyev_("V", "U", &n, a, &n, eigenvalues, work.data(), &lwork, &info);
  if (info != 0)
    throw std::runtime_error("symmetric eigendecomposition failed (LAPACK info " + std::to_string(info) +
                             ")");
  const auto size = static_cast<std::size_t>(n);
  std::vector<double> columns(size * size);
  for (std::size_t k = 0; k < size; ++k) {
    const std::size_t source = size - 1 - k;  // descending
    for (std::size_t i = 0; i < size; ++i) columns[i * size + k] = a[source * size + i];
  }
  std::copy(columns.begin(), columns.end(), a);
  std::reverse(eigenvalues, eigenvalues + n);
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
