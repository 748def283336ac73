// The fiber scheduler behind emu.h.
#include "emu.h"
#include <setjmp.h>
#include <ucontext.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

namespace emu {

Coords current;
uint64_t barriersPassed = 0;

namespace {

enum class State { Ready, AtBarrier, Done };

// A fiber starts on its own stack through ucontext (makecontext + setcontext: one signal-mask
// system call per fiber); every later switch, at each __syncthreads, is a _setjmp/_longjmp pair,
// which keeps the signal mask as it is and so costs no system call. swapcontext makes two per switch,
// and a reduction over thousands of outputs switches millions of times.
struct Fiber {
  ucontext_t ctx;
  jmp_buf env;
  bool started = false;
  State state = State::Ready;
  dim3 tid;
};

constexpr size_t STACK_BYTES = 64 * 1024;
std::vector<Fiber> fibers;
std::vector<char> stacks;
jmp_buf scheduler;
Fiber* running = nullptr;
Body* body = nullptr;

void entry() {
  body->run();
  running->state = State::Done;
  _longjmp(scheduler, 1);
}

}  // namespace

void syncthreads() {
  if (!running) { fprintf(stderr, "emu: __syncthreads() outside a launch\n"); abort(); }
  running->state = State::AtBarrier;
  if (!_setjmp(running->env)) _longjmp(scheduler, 1);
}

void launchBody(dim3 grid, dim3 block, Body& b) {
  size_t n = (size_t)block.x * block.y * block.z;
  if (n == 0 || n > 1024) { fprintf(stderr, "emu: invalid block size %zu\n", n); abort(); }
  fibers.assign(n, Fiber{});
  if (stacks.size() < n * STACK_BYTES) stacks.resize(n * STACK_BYTES);
  body = &b;
  barriersPassed = 0;
  ucontext_t blank;  // read once per launch: each fiber's context starts as a copy
  getcontext(&blank);
  current.gridSize = grid;
  current.blockSize = block;
  for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
      for (unsigned bx = 0; bx < grid.x; bx++) {
        current.block = dim3(bx, by, bz);
        for (size_t t = 0; t < n; t++) {
          Fiber& f = fibers[t];
          f.state = State::Ready;
          f.started = false;
          f.tid = dim3((unsigned)(t % block.x), (unsigned)((t / block.x) % block.y), (unsigned)(t / ((size_t)block.x * block.y)));
          f.ctx = blank;
          f.ctx.uc_stack.ss_sp = &stacks[t * STACK_BYTES];
          f.ctx.uc_stack.ss_size = STACK_BYTES;
          f.ctx.uc_link = nullptr;
          makecontext(&f.ctx, entry, 0);
        }
        for (;;) {
          // One phase: run every fiber until it reaches the barrier or returns.
          size_t waiting = 0, done = 0;
          for (size_t t = 0; t < n; t++) {
            Fiber& f = fibers[t];
            if (f.state == State::Ready) {
              running = &f;
              current.thread = f.tid;
              if (!_setjmp(scheduler)) {
                if (f.started) _longjmp(f.env, 1);
                f.started = true;
                setcontext(&f.ctx);
              }
              running = nullptr;
            }
            if (f.state == State::AtBarrier) waiting++;
            else if (f.state == State::Done) done++;
          }
          if (done == n) break;
          if (waiting != n) {
            fprintf(stderr, "emu: divergent __syncthreads in block (%u,%u,%u): %zu threads wait, %zu returned\n",
                    bx, by, bz, waiting, done);
            abort();
          }
          barriersPassed++;
          for (Fiber& f : fibers) f.state = State::Ready;
        }
      }
  body = nullptr;
}

}  // namespace emu
