// cuBLASLt plans: one matmul descriptor, layouts and heuristic algorithm per shape.
#include "vt/cuda/cublaslt_gemm.h"

#include <cublasLt.h>
#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "vt/cuda/cuda_check.h"

namespace vt::cuda {

namespace {
// cuBLASLt is opened on first use, not linked: the library is ~0.5 GB and loading it costs
// every process ~0.1 s and ~200 MB of resident memory, while only an opt-in prefill path
// (CudaExecutorOptions::cublas_min_tokens) needs it.
#define VT_CUBLASLT_FUNCTIONS(X)  \
  X(Create)                       \
  X(Destroy)                      \
  X(GetStatusName)                \
  X(GetStatusString)              \
  X(Matmul)                       \
  X(MatmulAlgoGetHeuristic)       \
  X(MatmulDescCreate)             \
  X(MatmulDescDestroy)            \
  X(MatmulDescSetAttribute)       \
  X(MatmulPreferenceCreate)       \
  X(MatmulPreferenceDestroy)      \
  X(MatmulPreferenceSetAttribute) \
  X(MatrixLayoutCreate)           \
  X(MatrixLayoutDestroy)

struct LtApi {
#define VT_LT_MEMBER(name) decltype(&cublasLt##name) name = nullptr;
  VT_CUBLASLT_FUNCTIONS(VT_LT_MEMBER)
#undef VT_LT_MEMBER
};

LtApi load_lt() {
  void* lib = nullptr;
  std::string tried;
  for (const char* path : {VT_CUBLASLT_PATH, VT_CUBLASLT_SONAME}) {
    if ((lib = dlopen(path, RTLD_NOW | RTLD_LOCAL))) break;
    const char* err = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (err ? err : path);
  }
  if (!lib) throw std::runtime_error("cannot load cuBLASLt: " + tried);
  LtApi api;
#define VT_LT_LOAD(name)                                                         \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, "cublasLt" #name)); \
  if (!api.name) throw std::runtime_error("cuBLASLt has no symbol cublasLt" #name);
  VT_CUBLASLT_FUNCTIONS(VT_LT_LOAD)
#undef VT_LT_LOAD
  return api;
}

const LtApi& lt() {
  static const LtApi api = load_lt();
  return api;
}
}  // namespace

namespace {
void check_lt(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLASLt error in ") + what + ": " +
                             lt().GetStatusName(st) + " (" + lt().GetStatusString(st) + ")");
}
}  // namespace

struct CublasLtGemm::Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    if (a) lt().MatrixLayoutDestroy(a);
    if (b) lt().MatrixLayoutDestroy(b);
    if (c) lt().MatrixLayoutDestroy(c);
    if (op) lt().MatmulDescDestroy(op);
  }
};

CublasLtGemm::CublasLtGemm(size_t workspace_bytes) : workspace_bytes_(workspace_bytes) {
  cublasLtHandle_t h;
  check_lt(lt().Create(&h), "cublasLtCreate");
  handle_ = h;
  check(cudaMalloc(&workspace_, workspace_bytes_), "cudaMalloc (cuBLASLt workspace)");
}

CublasLtGemm::~CublasLtGemm() {
  plans_.clear();
  if (workspace_) cudaFree(workspace_);
  if (handle_) lt().Destroy(static_cast<cublasLtHandle_t>(handle_));
}

CublasLtGemm::Plan& CublasLtGemm::plan(int64_t rows, int64_t cols, int64_t n_tok, int64_t ldy,
                                       bool bias) {
  const Key key{rows, cols, n_tok, ldy, bias};
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  auto p = std::make_unique<Plan>();
  // Column-major view: D (rows x n_tok, ld ldy) = op_T(A: cols x rows, ld cols) * B (cols x
  // n_tok, ld cols). A is W row-major, B is x row-major, D is y row-major.
  check_lt(lt().MatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "MatmulDescCreate");
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  check_lt(lt().MatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
           "TRANSA");
  check_lt(lt().MatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
           "TRANSB");
  if (bias) {
    const cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_BIAS;
    const cudaDataType_t bt = CUDA_R_32F;
    check_lt(lt().MatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep),
             "EPILOGUE");
    check_lt(
        lt().MatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt),
        "BIAS_DATA_TYPE");
  }
  check_lt(lt().MatrixLayoutCreate(&p->a, CUDA_R_16BF, cols, rows, cols), "layout A");
  check_lt(lt().MatrixLayoutCreate(&p->b, CUDA_R_16BF, cols, n_tok, cols), "layout B");
  check_lt(lt().MatrixLayoutCreate(&p->c, CUDA_R_32F, rows, n_tok, ldy), "layout C");
  cublasLtMatmulPreference_t pref;
  check_lt(lt().MatmulPreferenceCreate(&pref), "PreferenceCreate");
  check_lt(lt().MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace_bytes_, sizeof workspace_bytes_),
           "MAX_WORKSPACE_BYTES");
  cublasLtMatmulHeuristicResult_t res{};
  int found = 0;
  const cublasStatus_t st = lt().MatmulAlgoGetHeuristic(
      static_cast<cublasLtHandle_t>(handle_), p->op, p->a, p->b, p->c, p->c, pref, 1, &res, &found);
  lt().MatmulPreferenceDestroy(pref);
  check_lt(st, "AlgoGetHeuristic");
  if (found == 0)
    throw std::runtime_error("cuBLASLt has no bf16 GEMM algorithm for " + std::to_string(rows) +
                             "x" + std::to_string(cols) + " by " + std::to_string(n_tok) +
                             " tokens");
  p->algo = res.algo;
  return *(plans_[key] = std::move(p));
}

void CublasLtGemm::gemm(cudaStream_t s, const uint16_t* w, int64_t rows, int64_t cols,
                        const uint16_t* x, int64_t n_tok, float* y, int64_t ldy, const float* bias,
                        bool accumulate) {
  if (n_tok <= 0) return;
  Plan& p = plan(rows, cols, n_tok, ldy, bias != nullptr);
  if (bias)
    check_lt(
        lt().MatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
        "BIAS_POINTER");
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  check_lt(lt().Matmul(static_cast<cublasLtHandle_t>(handle_), p.op, &alpha, w, p.a, x, p.b, &beta,
                       y, p.c, y, p.c, &p.algo, workspace_, workspace_bytes_, s),
           "cublasLtMatmul");
}

}  // namespace vt::cuda
