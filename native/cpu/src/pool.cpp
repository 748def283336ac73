#include "pool.h"

#include <algorithm>
#include <utility>

namespace core_cpu {

Pool& Pool::instance() {
  static Pool pool;
  return pool;
}

Pool::~Pool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void Pool::grow(int workers) {
  while (static_cast<int>(workers_.size()) < workers) {
    const int thread = static_cast<int>(workers_.size()) + 1;
    workers_.emplace_back([this, thread] { work(thread); });
  }
}

void Pool::drain() {
  try {
    for (int64_t task = next_.fetch_add(1); task < tasks_; task = next_.fetch_add(1)) (*fn_)(task);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_) error_ = std::current_exception();
    next_.store(tasks_);  // the other threads take no more tasks
  }
}

void Pool::work(int thread) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    if (thread > participants_) continue;
    lock.unlock();
    drain();
    lock.lock();
    if (--pending_ == 0) done_.notify_one();
  }
}

void Pool::run(int threads, int64_t tasks, const TaskFn& fn) {
  const int helpers = static_cast<int>(std::min<int64_t>(threads, tasks)) - 1;
  if (helpers <= 0) {
    for (int64_t task = 0; task < tasks; ++task) fn(task);
    return;
  }
  std::lock_guard<std::mutex> call(callMutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    grow(helpers);
    fn_ = &fn;
    tasks_ = tasks;
    next_.store(0);
    participants_ = helpers;
    pending_ = helpers;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
  fn_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace core_cpu
