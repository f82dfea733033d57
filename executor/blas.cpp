#include "executor/blas.h"

#include <cblas.h>

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

}  // namespace pipesim::executor
