// kernelprofile.cc — a table of the kernels a piece of work ran on a
// device, from torch's own profiler (Kineto; on CUDA builds it reads the
// kernels' device times through CUPTI): per kernel name, the launches and
// the total, mean and share of device time, for `--profile` on a GPU.
//
// Why: on a GPU the host clock (opprofile.cc) measures launches and waits,
// not kernels; what an update spends its time on is only visible on the
// device's clock.
//
// What it is not: a trace (no timeline, no correlation of a kernel with the
// operator that launched it) or a memory profile. A libtorch without Kineto
// or without CUPTI records no device events; the table then has no rows and
// the count says so, for the caller to print. Asked for the CPU (device 0,
// for tests on machines without a GPU), it tables the CPU operators the
// profiler saw instead. One profile at a time; the operator table
// (opprofile.cc) may run beside it.
#include "common.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

std::mutex mu;
bool active = false;
c10::DeviceType device = c10::DeviceType::CPU;

// An event's duration in nanoseconds: KinetoEvent counts in microseconds in
// libtorch 1.13 and in nanoseconds in 2.x.
template <typename E>
auto duration_ns(const E& e, int) -> decltype(e.durationNs()) {
  return e.durationNs();
}
template <typename E>
uint64_t duration_ns(const E& e, long) {
  return e.durationUs() * 1000;
}

struct Stat {
  int64_t calls = 0;
  double ns = 0;
};

}  // namespace

extern "C" {

ts_err ts_kernel_profile_start(int cuda) {
  TS_TRY
  std::lock_guard<std::mutex> lock(mu);
  if (active) throw std::runtime_error("kernel profile already started");
  const std::set<ActivityType> activities{cuda ? ActivityType::CUDA : ActivityType::CPU};
  const ProfilerConfig config(ProfilerState::KINETO);
  prof::prepareProfiler(config, activities);
  prof::enableProfiler(config, activities);
  device = cuda ? c10::DeviceType::CUDA : c10::DeviceType::CPU;
  active = true;
  TS_CATCH
}

ts_err ts_kernel_profile_stop(char** table, int64_t* events) {
  TS_TRY
  std::lock_guard<std::mutex> lock(mu);
  if (!active) throw std::runtime_error("kernel profile was not started");
  active = false;
  auto result = prof::disableProfiler();
  std::map<std::string, Stat> stats;
  double all = 0;
  int64_t n = 0;
  for (const auto& e : result->events()) {
    if (e.deviceType() != device) continue;
    const double ns = static_cast<double>(duration_ns(e, 0));
    Stat& s = stats[std::string(e.name())];
    s.calls++;
    s.ns += ns;
    all += ns;
    n++;
  }
  std::vector<std::pair<std::string, Stat>> rows(stats.begin(), stats.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  const bool gpu = device == c10::DeviceType::CUDA;
  std::string out = gpu ? "CUDA kernels by device time (torch profiler, Kineto/CUPTI)\n"
                        : "CPU operators by time (torch profiler; inclusive)\n";
  char line[512];
  std::snprintf(line, sizeof line, "%d %s, %.3f ms in all\n", static_cast<int>(rows.size()), gpu ? "kernels" : "operators", all / 1e6);
  out += line;
  std::snprintf(line, sizeof line, "%12s %10s %12s %7s  %s\n", "total ms", "calls", "mean us", "share", "name");
  out += line;
  for (const auto& [name, s] : rows) {
    std::snprintf(line, sizeof line, "%12.3f %10lld %12.2f %6.1f%%  ", s.ns / 1e6, static_cast<long long>(s.calls),
                  s.ns / 1e3 / static_cast<double>(s.calls), all > 0 ? 100 * s.ns / all : 0.0);
    out += line;
    out += name;
    out += '\n';
  }
  *events = n;
  *table = static_cast<char*>(std::malloc(out.size() + 1));
  std::memcpy(*table, out.c_str(), out.size() + 1);
  TS_CATCH
}

}  // extern "C"
