#pragma once
// The executor's only BLAS entry points: row-major GEMM in fp32 (training) and fp64 (gradient checks).
namespace pipesim::executor {

// C = alpha * op(A) * op(B) + beta * C, row-major; op(A) is m x k, op(B) is k x n.
void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc);
void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, double alpha, const double* a, int lda,
          const double* b, int ldb, double beta, double* c, int ldc);

// One BLAS thread per worker: parallelism comes from the pipeline, and results stay reproducible.
void use_single_blas_thread();
// The threads the BLAS library will use for a call: 1 after use_single_blas_thread().
int blas_thread_count();

}  // namespace pipesim::executor
