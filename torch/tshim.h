/*
 * tshim.h — the C ABI between Go and libtorch.
 *
 * What it is: a narrow, hand-written surface over ATen, exactly the operations
 * troupe uses, grouped by concern (tensor.cc, shape.cc, math.cc, nn.cc,
 * norm.cc, attention.cc, fused.cc, autograd.cc, optim.cc, dist.cc, graph.cc,
 * opcount.cc, cpu_memory.cc, runtime.cc). Handles are opaque; dtypes and devices are ints; results come
 * back through out-parameters; every function returns its own error: NULL on
 * success, otherwise a malloc'd C string that the caller releases with
 * ts_free_err. There is no "last error" state.
 *
 * What it is not: a generated binding of ATen. Adding an op means adding one
 * declaration here, one function in csrc/, and one Go method.
 *
 * It lives beside the Go files (not in csrc/) because Go's build cache hashes
 * headers in the package directory: a change here rebuilds the Go side.
 */
#ifndef TROUPE_TSHIM_H
#define TROUPE_TSHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_tensor_s* ts_tensor; /* owns one at::Tensor reference */
typedef struct ts_gen_s* ts_gen;       /* owns one at::Generator */
typedef struct ts_adamw_s* ts_adamw;   /* AdamW state over a parameter list */
typedef struct ts_pg_s* ts_pg;         /* a c10d process group (dist.cc) */
typedef struct ts_work_s* ts_work;     /* a collective in flight (dist.cc) */
typedef struct ts_graph_s* ts_graph;   /* a CUDA graph being captured or captured (graph.cc) */
typedef char* ts_err;                  /* NULL = success */

/* dtypes (ints on the wire) */
enum {
  TS_F32 = 0, TS_F16 = 1, TS_BF16 = 2, TS_I64 = 3, TS_I32 = 4,
  TS_BOOL = 5, TS_F64 = 6, TS_U8 = 7, TS_I8 = 8, TS_I16 = 9
};
/* devices: TS_CPU, or a CUDA ordinal >= 0 */
enum { TS_CPU = -1 };

void ts_free_err(ts_err e);

/* ---- tensor.cc: lifetime, metadata, creation, host copies ---- */
ts_err ts_free(ts_tensor t);
ts_err ts_shallow_clone(ts_tensor t, ts_tensor* out); /* a second handle to the same tensor */
ts_err ts_dim(ts_tensor t, int* out);
ts_err ts_shape(ts_tensor t, int64_t* dims, int cap); /* cap >= dim */
ts_err ts_dtype(ts_tensor t, int* out);
ts_err ts_device(ts_tensor t, int* out);
ts_err ts_numel(ts_tensor t, int64_t* out);
ts_err ts_is_contiguous(ts_tensor t, int* out);
ts_err ts_data_ptr(ts_tensor t, void** out);
ts_err ts_from_data(const void* data, int64_t nbytes, int dtype, const int64_t* dims, int ndim, ts_tensor* out);
ts_err ts_copy_to_host(ts_tensor t, void* dst, int64_t nbytes); /* t: CPU contiguous, nbytes = numel*size */
ts_err ts_empty(const int64_t* dims, int ndim, int dtype, int device, ts_tensor* out);
ts_err ts_full(const int64_t* dims, int ndim, double value, int dtype, int device, ts_tensor* out);
ts_err ts_arange(double start, double end, double step, int dtype, int device, ts_tensor* out);
ts_err ts_randn(const int64_t* dims, int ndim, int dtype, int device, ts_gen g, ts_tensor* out);
ts_err ts_rand(const int64_t* dims, int ndim, int dtype, int device, ts_gen g, ts_tensor* out);
ts_err ts_to(ts_tensor t, int device, int dtype, ts_tensor* out);
ts_err ts_clone(ts_tensor t, ts_tensor* out);
ts_err ts_copy_(ts_tensor dst, ts_tensor src); /* in place, broadcasting, dst may be a view */
ts_err ts_fill_(ts_tensor t, double value);
ts_err ts_item(ts_tensor t, double* out);
/* The storage under t and its views: its size and an identity (equal for tensors that share it).
 * storage_resize frees it (nbytes 0) or gives it new, uninitialised memory of nbytes on its device;
 * every view sees the change (sharded parameters: FSDP's free and re-allocation of a weight). */
ts_err ts_storage_info(ts_tensor t, int64_t* nbytes, uint64_t* id);
ts_err ts_storage_resize(ts_tensor t, int64_t nbytes);

/* ---- shape.cc: views and indexing ---- */
ts_err ts_reshape(ts_tensor t, const int64_t* dims, int ndim, ts_tensor* out);
ts_err ts_view(ts_tensor t, const int64_t* dims, int ndim, ts_tensor* out);
ts_err ts_expand(ts_tensor t, const int64_t* dims, int ndim, ts_tensor* out);
ts_err ts_permute(ts_tensor t, const int64_t* dims, int ndim, ts_tensor* out);
ts_err ts_transpose(ts_tensor t, int64_t d0, int64_t d1, ts_tensor* out);
ts_err ts_narrow(ts_tensor t, int64_t dim, int64_t start, int64_t len, ts_tensor* out);
ts_err ts_slice(ts_tensor t, int64_t dim, int64_t start, int64_t end, int64_t step, ts_tensor* out);
ts_err ts_squeeze(ts_tensor t, int64_t dim, ts_tensor* out);
ts_err ts_unsqueeze(ts_tensor t, int64_t dim, ts_tensor* out);
ts_err ts_contiguous(ts_tensor t, ts_tensor* out);
ts_err ts_cat(const ts_tensor* ts, int n, int64_t dim, ts_tensor* out);
ts_err ts_stack(const ts_tensor* ts, int n, int64_t dim, ts_tensor* out);
ts_err ts_index_select(ts_tensor t, int64_t dim, ts_tensor index, ts_tensor* out);
ts_err ts_gather(ts_tensor t, int64_t dim, ts_tensor index, ts_tensor* out);
ts_err ts_scatter(ts_tensor t, int64_t dim, ts_tensor index, ts_tensor src, ts_tensor* out);
ts_err ts_scatter_add(ts_tensor t, int64_t dim, ts_tensor index, ts_tensor src, ts_tensor* out);
ts_err ts_index_put(ts_tensor t, const ts_tensor* indices, int n, ts_tensor values, int accumulate, ts_tensor* out);
ts_err ts_index_copy_(ts_tensor t, int64_t dim, ts_tensor index, ts_tensor src); /* in place: t[index] = src along dim */
ts_err ts_masked_fill(ts_tensor t, ts_tensor mask, double value, ts_tensor* out);
ts_err ts_masked_select(ts_tensor t, ts_tensor mask, ts_tensor* out); /* 1-d, row-major order */
ts_err ts_where(ts_tensor cond, ts_tensor a, ts_tensor b, ts_tensor* out);
ts_err ts_triu(ts_tensor t, int64_t diagonal, ts_tensor* out);
ts_err ts_tril(ts_tensor t, int64_t diagonal, ts_tensor* out);
ts_err ts_repeat_interleave(ts_tensor t, int64_t repeats, int64_t dim, ts_tensor* out);
ts_err ts_flip(ts_tensor t, const int64_t* dims, int ndim, ts_tensor* out);

/* ---- math.cc: elementwise, reductions, products ---- */
enum { /* unary op codes */
  TS_NEG = 0, TS_ABS, TS_EXP, TS_LOG, TS_SQRT, TS_RSQRT, TS_SIN, TS_COS, TS_TANH,
  TS_SIGMOID, TS_SILU, TS_RELU, TS_LOG1P, TS_EXPM1, TS_LOGICAL_NOT, TS_ISFINITE,
  TS_ISNAN, TS_SIGN, TS_FLOOR, TS_RECIPROCAL, TS_SQUARE, TS_GELU_TANH
};
enum { /* binary op codes (tensor-tensor with broadcasting, or tensor-scalar) */
  TS_ADD = 0, TS_SUB, TS_MUL, TS_DIV, TS_POW, TS_MINIMUM, TS_MAXIMUM,
  TS_EQ, TS_NE, TS_LT, TS_LE, TS_GT, TS_GE, TS_LOGICAL_AND, TS_LOGICAL_OR, TS_REM
};
enum { /* reduction op codes */
  TS_SUM = 0, TS_MEAN, TS_AMAX, TS_AMIN, TS_PROD, TS_ALL, TS_ANY, TS_LOGSUMEXP,
  TS_VAR, TS_STD, TS_NORM
};
ts_err ts_unary(int op, ts_tensor t, ts_tensor* out);
ts_err ts_binary(int op, ts_tensor a, ts_tensor b, ts_tensor* out);
/* scalar operand: is_int selects an integer scalar so integer tensors stay integer */
ts_err ts_binary_scalar(int op, ts_tensor a, double s, int is_int, ts_tensor* out);
ts_err ts_rsub_scalar(ts_tensor a, double s, int is_int, ts_tensor* out); /* s - a */
ts_err ts_inplace_binary(int op, ts_tensor a, ts_tensor b);            /* add_/sub_/mul_/div_ */
ts_err ts_clamp(ts_tensor t, double lo, double hi, int has_lo, int has_hi, ts_tensor* out);
/* all dims when ndim == 0; unbiased matters for TS_VAR/TS_STD only */
ts_err ts_reduce(int op, ts_tensor t, const int64_t* dims, int ndim, int keepdim, int unbiased, ts_tensor* out);
ts_err ts_max_dim(ts_tensor t, int64_t dim, int keepdim, ts_tensor* values, ts_tensor* indices);
ts_err ts_min_dim(ts_tensor t, int64_t dim, int keepdim, ts_tensor* values, ts_tensor* indices);
ts_err ts_argmax(ts_tensor t, int64_t dim, int keepdim, ts_tensor* out);
ts_err ts_cumsum(ts_tensor t, int64_t dim, ts_tensor* out);
ts_err ts_sort(ts_tensor t, int64_t dim, int descending, ts_tensor* values, ts_tensor* indices);
ts_err ts_topk(ts_tensor t, int64_t k, int64_t dim, int largest, ts_tensor* values, ts_tensor* indices);
ts_err ts_matmul(ts_tensor a, ts_tensor b, ts_tensor* out);
ts_err ts_bmm(ts_tensor a, ts_tensor b, ts_tensor* out);

/* ---- nn.cc: the pieces of a transformer and its sampler ---- */
ts_err ts_softmax(ts_tensor t, int64_t dim, ts_tensor* out);     /* computed in f32 (f64 for f64 input), returned in t's dtype */
ts_err ts_log_softmax(ts_tensor t, int64_t dim, ts_tensor* out); /* same */
ts_err ts_embedding(ts_tensor weight, ts_tensor ids, ts_tensor* out);
ts_err ts_linear(ts_tensor x, ts_tensor w, ts_tensor b /* nullable */, ts_tensor* out);
/* rotary embedding, rotate-half convention: x*cos + cat(-x2, x1)*sin, computed as
 * x*cos + cat(x2, x1)*sin_signed where sin_signed = cat(-sin1, sin2) (sin with its first half
 * negated); cos/sin_signed broadcast to x */
ts_err ts_rope(ts_tensor x, ts_tensor cos, ts_tensor sin_signed, ts_tensor* out);

/* ---- norm.cc ---- */
/* Hugging Face Qwen RMSNorm: w * (x_f32 * rsqrt(mean(x_f32^2) + eps)).to(x.dtype); fused != 0
 * computes the normalisation with ATen's fused kernel for CUDA tensors where the build has it */
ts_err ts_rms_norm(ts_tensor x, ts_tensor w, double eps, int fused, ts_tensor* out);
ts_err ts_rms_norm_fused(int* out); /* 1 when the build has the fused kernel (GPU builds) */
/* q (B,H,T,D), k/v (B,H,S,D); mask nullable: bool (true = attend) or additive float, broadcast to
 * (B,H,T,S); causal aligns the diagonal top-left and needs T == S; scale <= 0 means 1/sqrt(D).
 * fused != 0 uses at::scaled_dot_product_attention where the build has it. */
ts_err ts_sdpa(ts_tensor q, ts_tensor k, ts_tensor v, ts_tensor mask, int causal, double scale, int fused, ts_tensor* out);
/* attention over packed sequences (attention.cc), flash-attention's varlen layout: q (Nq, H, D),
 * k/v (Nk, KVH, D) with H % KVH == 0 (no repeat of K/V); cu_q/cu_k int (B+1) offsets of each
 * sequence's queries and keys; seqused_k int (B) nullable: sequence b uses only its first
 * seqused_k[b] keys (decoding over a per-slot cache); causal aligns bottom-right (query i of tq sees
 * keys j <= i + tk - tq); query rows past cu_q[B] come back zero; max_q/max_k bound the lengths.
 * CUDA bf16/f16 on libtorch >= 2.6 runs the flash kernel (capturable); otherwise a per-sequence loop
 * of explicit math (differentiable; reads the offsets on the host). */
enum { TS_VARLEN_LOOP = 1 }; /* flags: always take the per-sequence loop (the reference path) */
ts_err ts_varlen_attention(ts_tensor q, ts_tensor k, ts_tensor v, ts_tensor cu_q, ts_tensor cu_k, int64_t max_q,
                           int64_t max_k, ts_tensor seqused_k /* nullable */, int causal, double scale, int flags,
                           ts_tensor* out);
ts_err ts_varlen_attention_fused(int* out); /* 1 when this build has the flash varlen kernel */
ts_err ts_multinomial(ts_tensor probs, int64_t n, int replacement, ts_gen g, ts_tensor* out);
/* per-token log-probability of targets and (optionally) entropy, from logits (N,V) in f32 math:
 * logp (N) = logits[target] - logsumexp(logits); entropy (N) = lse - sum(softmax*logits). */
ts_err ts_token_logprobs(ts_tensor logits, ts_tensor targets, int want_entropy, ts_tensor* logp, ts_tensor* entropy);
/* the same from hidden states (N,D) and the output projection (V,D), logits divided by temperature
 * (<= 0: 1), projected `chunk` rows at a time and recomputed in the backward pass instead of saved
 * (fused.cc); differentiable with respect to hidden and weight; the entropy's backward runs only
 * when a grad reaches the entropy. */
ts_err ts_linear_token_logprobs(ts_tensor hidden, ts_tensor weight, ts_tensor targets, double temperature,
                                int64_t chunk, int want_entropy, ts_tensor* logp, ts_tensor* entropy);
/* rows whose entropy grad ts_linear_token_logprobs's backward has computed in this process */
ts_err ts_linear_token_logprobs_entropy_backward_rows(int64_t* out);

/* ---- autograd.cc ---- */
ts_err ts_requires_grad(ts_tensor t, int* out);
ts_err ts_set_requires_grad(ts_tensor t, int on);
ts_err ts_backward(ts_tensor t, ts_tensor grad /* nullable */);
ts_err ts_grad(ts_tensor t, ts_tensor* out); /* *out = NULL when the grad is undefined */
ts_err ts_detach(ts_tensor t, ts_tensor* out);
ts_err ts_zero_grad(ts_tensor t); /* sets the grad undefined, as 2.x zero_grad(set_to_none) */
ts_err ts_set_grad(ts_tensor t, ts_tensor grad); /* grad: t's shape and dtype, shared not copied */
ts_err ts_set_grad_enabled(int on, int* previous); /* thread-local in libtorch */
ts_err ts_is_grad_enabled(int* out);
/* total 2-norm over the grads of params (undefined grads count as zero), computed in f32;
 * when max_norm > 0 and the norm is finite and above it, grads are scaled by max_norm/(norm+1e-6). */
ts_err ts_clip_grad_norm(const ts_tensor* params, int n, double max_norm, double* total_norm);

/* ---- optim.cc: AdamW (decoupled weight decay) with parameter groups ----
 * group[i] names the group of params[i]; lr/beta1/beta2/eps/weight_decay are per group.
 * master_f32 is the state mode: 0 float32 moments, a non-f32 parameter updated through a float32
 * copy; 1 the same and a float32 master copy of every non-f32 parameter that the update runs on
 * and copies back rounded, so bf16 weights accumulate small updates correctly; 2 no master and
 * moments in each parameter's dtype, every operation rounded to it (torch.optim.AdamW on bf16
 * parameters). */
ts_err ts_adamw_new(const ts_tensor* params, int n, const int* group, int ngroups, const double* lr,
                    const double* beta1, const double* beta2, const double* eps, const double* weight_decay,
                    int master_f32, ts_adamw* out);
ts_err ts_adamw_free(ts_adamw o);
ts_err ts_adamw_set_lr(ts_adamw o, int group, double lr);
ts_err ts_adamw_step(ts_adamw o); /* params without a grad are skipped, like torch.optim */
ts_err ts_adamw_zero_grad(ts_adamw o);
ts_err ts_adamw_fused(int* out); /* 1 when CUDA parameters step through ATen's fused kernel */
ts_err ts_adamw_step_count(ts_adamw o, int i, int64_t* out);
/* handles share storage with the live state; exp_avg/exp_avg_sq are undefined (NULL) before the
 * first step of that parameter; master is NULL when the parameter has none. */
ts_err ts_adamw_state(ts_adamw o, int i, ts_tensor* exp_avg, ts_tensor* exp_avg_sq, ts_tensor* master);
/* copies into the state (allocating it when absent); shapes must match the parameter */
ts_err ts_adamw_load_state(ts_adamw o, int i, int64_t step, ts_tensor exp_avg, ts_tensor exp_avg_sq, ts_tensor master);

/* ---- dist.cc: collectives across processes on c10d (Gloo for CPU tensors, NCCL for CUDA) ----
 * init blocks until all `world` ranks have joined the TCPStore that rank 0 hosts at host:port;
 * timeout_ms bounds the rendezvous and every collective (Gloo's and NCCL's options, and each
 * host wait). device: the CUDA device NCCL is bound to (LOCAL_RANK), -1 for none. Gloo's
 * transport binds the comma-separated network interfaces gloo_ifaces, else the address
 * gloo_addr, else the host name's address (NULL or "" skips one). Failures name this rank.
 * Backends depend on the build. describe writes the options the backends hold (timeouts,
 * devices), as c10d reports them (malloc'd: free() it).
 *
 * all_reduce and broadcast take a list of tensors, in place, in buckets of at most bucket_bytes
 * (<= 0: TS_DIST_BUCKET_BYTES): a contiguous tensor of a bucket or more goes in slices of
 * itself, smaller ones are packed per dtype into a bucket-sized buffer (on Gloo a bf16/f16
 * bucket is summed in float32 and rounded once, its buffer float32). On NCCL every bucket is
 * stream-ordered (the current stream waits for it; the host does not) and the host checks each
 * bucket two buckets later and all of them before the call returns. all_gather, barrier and
 * a list of CPU tensors block the host as before. */
enum { TS_DIST_SUM = 0, TS_DIST_MAX = 1 };
#define TS_DIST_BUCKET_BYTES (256LL << 20)
ts_err ts_dist_backends(int* gloo, int* nccl);
ts_err ts_dist_init(const char* host, int port, int rank, int world, int device, int64_t timeout_ms,
                    const char* gloo_ifaces, const char* gloo_addr, int want_gloo, int want_nccl, ts_pg* out);
ts_err ts_dist_describe(ts_pg pg, char** out);
ts_err ts_dist_free(ts_pg pg);
ts_err ts_dist_all_reduce(ts_pg pg, const ts_tensor* ts, int n, int op, int64_t bucket_bytes);
ts_err ts_dist_all_gather(ts_pg pg, ts_tensor t, ts_tensor* out); /* (world, *t.shape) */
ts_err ts_dist_broadcast(ts_pg pg, const ts_tensor* ts, int n, int root, int64_t bucket_bytes);
ts_err ts_dist_barrier(ts_pg pg);
/* Sharded training (ZeRO/FSDP) on flat 1-d buffers of equal chunks, n elements per rank:
 * reduce_scatter: in (world·n), out (n) = Σ over ranks of their in[rank·n : (rank+1)·n], this
 * rank's chunk (NCCL: reduce_scatter; Gloo, which has none in every version: all-to-all, then the
 * W chunks summed here in rank order). all_gather_into: in (n), out (world·n), rank r's in at
 * [r·n, (r+1)·n) (NCCL: allgather into one buffer; Gloo: allgather into views of it). On Gloo
 * both carry bf16/f16 as their bits, so they work where Gloo's own reductions refuse those.
 * work NULL: the call returns when the result is there (the host waited). Otherwise, on NCCL,
 * *work is the collective in flight and nothing waited for it: work_wait makes the current
 * stream wait for it (stream-ordered: read out only after that), with host set the host too,
 * until it completes, fails or the timeout passes (the error names this rank); work_free
 * drops the handle (freeing one never waited for leaves the result unordered). On Gloo the
 * host has waited already and *work is NULL; every work_ call takes NULL as done. */
ts_err ts_dist_reduce_scatter(ts_pg pg, ts_tensor in, ts_tensor out, ts_work* work);
ts_err ts_dist_all_gather_into(ts_pg pg, ts_tensor in, ts_tensor out, ts_work* work);
ts_err ts_work_wait(ts_work w, int host);
ts_err ts_work_free(ts_work w);
/* What the group did since init: collectives issued by kind (c10d calls: one per bucket), the
 * times the host blocked on one, and the largest staging buffer a collective allocated (bytes:
 * all_reduce's and broadcast's packed buckets, the Gloo reduce-scatter's receive buffer; not
 * the caller's tensors nor all_gather's result). Fills min(n, TS_DIST_NSTATS) values. */
enum {
  TS_DIST_STAT_ALL_REDUCE = 0,
  TS_DIST_STAT_BROADCAST,
  TS_DIST_STAT_ALL_GATHER,
  TS_DIST_STAT_REDUCE_SCATTER,
  TS_DIST_STAT_ALL_GATHER_INTO,
  TS_DIST_STAT_BARRIER,
  TS_DIST_STAT_HOST_WAITS,
  TS_DIST_STAT_LARGEST_BUFFER,
  TS_DIST_NSTATS
};
ts_err ts_dist_stats(ts_pg pg, int64_t* out, int n);

/* ---- graph.cc: CUDA graphs; all but ts_graph_supported fail in builds without them ---- */
ts_err ts_graph_supported(int* out);
ts_err ts_graph_pool(uint64_t* a, uint64_t* b); /* a new memory pool id graphs may share */
ts_err ts_graph_new(int device, ts_graph* out);
ts_err ts_graph_enter(ts_graph g); /* its side stream becomes current (eager warm-up, then capture) */
ts_err ts_graph_exit(ts_graph g);  /* the previous stream again, after the side stream's work */
ts_err ts_graph_begin(ts_graph g, uint64_t pool_a, uint64_t pool_b);
ts_err ts_graph_end(ts_graph g);
ts_err ts_graph_replay(ts_graph g);
ts_err ts_graph_free(ts_graph g); /* also ends an unfinished capture */

/* ---- opcount.cc ---- */
/* counts ATen operator calls between start and stop, on every thread; no other torch work may
 * start or stop concurrently with either call. leaves: calls that dispatched nothing below them,
 * except views and allocations (a proxy for kernel launches) */
ts_err ts_op_count_start(void);
ts_err ts_op_count_stop(int64_t* ops, int64_t* leaves);

/* ---- cpu_fast.cc ---- */
/* thread-local, on: 0 off; 1 (a prefill) no-grad CPU float32/64 calls of varlen attention, RoPE
 * and RMSNorm take single-pass kernels (equal to the ATen math up to float rounding), and linear
 * too on AVX-512; 2 (a decode step) as 1, and linear from AVX2 up (linear_cpu.cc); each computes a
 * row the same way whatever shares the call */
ts_err ts_set_generation_kernels(int on, int* previous);
/* the vector code the CPU kernels run on this machine: "avx512", "avx2" or "baseline" (a static
 * string); TROUPE_CPU_SIMD=avx2|baseline picks a lesser one */
ts_err ts_cpu_kernels_variant(const char** out);

/* ---- opprofile.cc ---- */
/* per ATen operator: calls, self and total host time, between start and stop, on every thread;
 * stop returns a malloc'd text table (caller frees) sorted by self time */
ts_err ts_op_profile_start(void);
ts_err ts_op_profile_stop(char** table);

/* ---- kernelprofile.cc ---- */
/* torch's profiler (Kineto) between start and stop: per kernel name on CUDA (cuda != 0), or per
 * CPU operator, the calls and the device time; stop returns a malloc'd text table (caller frees)
 * and the number of events in it (0 on a libtorch without Kineto/CUPTI) */
ts_err ts_kernel_profile_start(int cuda);
ts_err ts_kernel_profile_stop(char** table, int64_t* events);

/* ---- cpu_memory.cc: what libtorch's CPU allocator holds ----
 * track puts a counting allocator in front of the CPU allocator (idempotent; *ok = 0 where the
 * allocator in place cannot be wrapped); storages made before it are never counted. memory: the
 * bytes allocated through it now and the peak since track or reset_peak (zeros before track). */
ts_err ts_cpu_memory_track(int* ok);
ts_err ts_cpu_memory(int64_t* allocated, int64_t* peak);
ts_err ts_cpu_reset_peak(void);

/* ---- runtime.cc ---- */
ts_err ts_version(int* major, int* minor, int* patch);
ts_err ts_shim_path(const char** out); /* file the shim was loaded from; static storage, do not free */
/* 0 for a CPU-only shim; for a CUDA build the CUDA runtime version it was compiled against (12040 = 12.4) */
ts_err ts_build_cuda(int* cuda_runtime);
ts_err ts_set_num_threads(int n);
/* glibc's allocator: keep up to trim_bytes of freed memory instead of returning it to the system,
 * and serve blocks below mmap_bytes from the heap; *ok = 0 where the C library is not glibc */
ts_err ts_keep_freed_memory(int64_t trim_bytes, int64_t mmap_bytes, int* ok);
ts_err ts_get_num_threads(int* out);
ts_err ts_manual_seed(uint64_t seed);
ts_err ts_cuda_available(int* out);
ts_err ts_cuda_device_count(int* out);
ts_err ts_fused_sdpa_available(int* out);
ts_err ts_cuda_synchronize(int device);
/* makes cuda:device this thread's current device (before any CUDA work) */
ts_err ts_cuda_set_device(int device);
/* cuda:device's PCI bus id as CUDA writes it ("0000:3b:00.0"), through this process's numbering
 * (CUDA_VISIBLE_DEVICES); malloc'd, free with free(); "" on CPU-only builds */
ts_err ts_cuda_pci_bus_id(int device, char** out);
/* bytes; zeros on CPU-only builds */
ts_err ts_cuda_memory(int device, int64_t* allocated, int64_t* reserved, int64_t* peak);
ts_err ts_cuda_reset_peak(int device);
ts_err ts_cuda_empty_cache(void);
ts_err ts_gen_new(int device, uint64_t seed, ts_gen* out);
ts_err ts_gen_free(ts_gen g);
ts_err ts_gen_seed(ts_gen g, uint64_t* out);
ts_err ts_gen_get_state(ts_gen g, ts_tensor* out); /* a CPU uint8 tensor */
ts_err ts_gen_set_state(ts_gen g, ts_tensor state);

#ifdef __cplusplus
}
#endif
#endif
