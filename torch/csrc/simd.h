// simd.h — what the CPU kernels (linear_cpu.cc, attention_cpu.cc) share to
// compile their loops once per instruction set: the vector types, an
// unaligned load, the per-function targets and the choice of variant.
//
// Each kernel's loops are templates over a vector type; a macro instantiates
// them in functions compiled for AVX-512, for AVX2 with FMA and for the
// baseline, and TS_PICK names the one for this process's level
// (tshim::simd_level, chosen once, so a process rounds one way throughout).
#pragma once

#include <cstring>

#include "common.h"

// The loops pass vectors only between always-inlined helpers; GCC's note
// about passing 64-byte vectors by value concerns calls that never happen.
#pragma GCC diagnostic ignored "-Wpsabi"

#if defined(__x86_64__) && defined(__GNUC__)
#define TS_SIMD_VARIANTS 1
#define TS_TARGET_AVX512 __attribute__((target("avx512f,avx512dq,avx2,fma")))
#define TS_TARGET_AVX2 __attribute__((target("avx2,fma")))
// TS_PICK(p, s): p##_avx512##s, p##_avx2##s or p##_base##s
#define TS_PICK(p, s) \
  (tshim::simd_level() == 2 ? p##_avx512##s : tshim::simd_level() == 1 ? p##_avx2##s : p##_base##s)
#else
#define TS_PICK(p, s) (p##_base##s)
#endif

namespace tshim::simd {

// One register's worth of lanes per variant: AVX-512, AVX2, SSE2 (or NEON).
typedef float vf16 __attribute__((vector_size(64)));
typedef double vd8 __attribute__((vector_size(64)));
typedef float vf8 __attribute__((vector_size(32)));
typedef double vd4 __attribute__((vector_size(32)));
typedef float vf4 __attribute__((vector_size(16)));
typedef double vd2 __attribute__((vector_size(16)));

template <typename S, typename V>
__attribute__((always_inline)) inline V load(const S* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));  // unaligned
  return v;
}

}  // namespace tshim::simd
