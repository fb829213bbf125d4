// opprofile.cc — a table of the ATen operators a piece of work ran: per
// operator name, the calls, the total time (inclusive of the operators it
// called) and the self time, on the host clock, through a global
// RecordFunction callback installed only while profiling.
//
// What it is not: torch.profiler (Kineto traces, CUDA kernel times, memory
// events); libtorch builds differ in whether they ship Kineto, and every
// build has RecordFunction. On a GPU the host times are launch times unless
// the work synchronises. Nested profiles are refused.
#include "common.h"

#include <ATen/record_function.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

using clk = std::chrono::steady_clock;

struct Stat {
  int64_t calls = 0;
  double total = 0, self = 0;  // seconds
};

struct Frame {
  clk::time_point start;
  double children = 0;
};

std::mutex mu;  // guards stats and handle
at::CallbackHandle handle = 0;
std::map<std::string, Stat> stats;
thread_local std::vector<Frame> frames;

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction&) {
  frames.push_back({clk::now(), 0});
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  if (frames.empty()) return;  // began before profiling started
  Frame f = frames.back();
  frames.pop_back();
  const double total = std::chrono::duration<double>(clk::now() - f.start).count();
  if (!frames.empty()) frames.back().children += total;
  std::lock_guard<std::mutex> lock(mu);
  Stat& s = stats[fn.name()];
  s.calls++;
  s.total += total;
  s.self += total - f.children;
}

}  // namespace

extern "C" {

ts_err ts_op_profile_start(void) {
  TS_TRY
  std::lock_guard<std::mutex> lock(mu);
  if (handle != 0) throw std::runtime_error("op profile already started");
  stats.clear();
  handle = at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end).scopes({at::RecordScope::FUNCTION}));
  TS_CATCH
}

ts_err ts_op_profile_stop(char** table) {
  TS_TRY
  std::lock_guard<std::mutex> lock(mu);
  if (handle == 0) throw std::runtime_error("op profile was not started");
  at::removeCallback(handle);
  handle = 0;
  std::vector<std::pair<std::string, Stat>> rows(stats.begin(), stats.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.self > b.second.self; });
  double all = 0;
  for (const auto& r : rows) all += r.second.self;
  std::string out = "ATen operators by self time (host clock)\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-40s %10s %12s %12s %7s\n", "operator", "calls", "self ms", "total ms", "self %");
  out += line;
  for (const auto& [name, s] : rows) {
    std::snprintf(line, sizeof line, "%-40s %10lld %12.3f %12.3f %6.1f%%\n", name.c_str(), static_cast<long long>(s.calls),
                  s.self * 1e3, s.total * 1e3, all > 0 ? 100 * s.self / all : 0.0);
    out += line;
  }
  stats.clear();
  *table = static_cast<char*>(std::malloc(out.size() + 1));
  std::memcpy(*table, out.c_str(), out.size() + 1);
  TS_CATCH
}

}  // extern "C"
