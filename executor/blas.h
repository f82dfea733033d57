#pragma once
// The executor's only BLAS and LAPACK entry points: row-major GEMM in fp32 (training) and fp64 (gradient
// checks), and a symmetric eigendecomposition (SOAP's preconditioner bases).
#include <string>
#include <string_view>

namespace pipesim::executor {

// C = alpha * op(A) * op(B) + beta * C, row-major; op(A) is m x k, op(B) is k x n.
void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc);
void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, double alpha, const double* a, int lda,
          const double* b, int ldb, double beta, double* c, int ldc);

// The eigenvectors of the symmetric n x n matrix `a` (row-major; both triangles read as one), as the columns
// of `a` on return, ordered by descending eigenvalue; `eigenvalues` (n) receives them in that order. Throws
// std::runtime_error when LAPACK does not converge.
void symmetric_eigenvectors(int n, double* a, double* eigenvalues);

// One BLAS thread per worker: parallelism comes from the pipeline, and results stay reproducible.
void use_single_blas_thread();
// The threads the BLAS library will use for a call: 1 after use_single_blas_thread().
int blas_thread_count();

// OpenBLAS picks its kernels when it loads. On a CPU whose model it does not know (a VM's generic "Intel
// Xeon Processor") it falls back to Prescott's SSE3 kernels, 3-5x slower than the AVX2 or AVX-512 ones the
// CPU runs. The OPENBLAS_CORETYPE that gives the faster kernels when that happened and the variable is not
// set; empty otherwise.
std::string better_blas_core_type();
// The kernel set OpenBLAS runs ("Prescott", "Haswell", "SkylakeX", ...).
std::string blas_core_name();
// Whether `core` names one of the generic kernel sets OpenBLAS falls back to (Prescott, Core2, Nehalem; any
// case).
bool is_fallback_blas_core(std::string_view core);
// When better_blas_core_type() is not empty, runs this program again with OPENBLAS_CORETYPE set to it (exec
// of /proc/self/exe with the same arguments); returns when there is nothing to do or the exec failed.
// Call first thing in main: nothing of the process survives. The new process also has kBlasCoreChosenMarker
// set (to 1), so that a choice of pipesim's is told apart from the user's.
inline constexpr const char* kBlasCoreChosenMarker = "PIPESIM_CHOSE_OPENBLAS_CORETYPE";
void rerun_with_better_blas_kernels(char** argv);

}  // namespace pipesim::executor
