// A process-wide pool of kernel threads. run() hands tasks [0, tasks) out one at a time to up to
// `threads` threads, the calling thread among them, and returns once all have finished. Workers
// start on first need and sleep on a condition variable between runs. One run at a time: calls
// from several JavaScript threads (worker_threads) take turns. A task that throws stops no other;
// run() rethrows the first exception once every thread is done.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace core_cpu {

using TaskFn = std::function<void(int64_t task)>;

class Pool {
 public:
  static Pool& instance();
  void run(int threads, int64_t tasks, const TaskFn& fn);
  ~Pool();

 private:
  void grow(int workers);
  void work(int thread);
  void drain();

  std::mutex callMutex_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::vector<std::thread> workers_;
  uint64_t generation_ = 0;
  int participants_ = 0;  // workers (besides the caller) taking part in the current run
  int pending_ = 0;       // of those, the ones not finished yet
  bool stop_ = false;
  int64_t tasks_ = 0;
  std::atomic<int64_t> next_{0};
  const TaskFn* fn_ = nullptr;
  std::exception_ptr error_;
};

}  // namespace core_cpu
