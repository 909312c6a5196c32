#include "tests/support/alloc_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
// Every replaceable form that pairs with free() is replaced, so sanitizers see matching
// allocation and deallocation functions. Process-wide, so that allocations on worker threads count
// too.
std::atomic<size_t> g_allocations{0};
std::atomic<int> g_open{0};
}  // namespace

// AddressSanitizer brings its own allocator and reports mixing it with these replacements; under
// it the counter is unavailable and the no-allocation tests say they skipped.
#ifndef __SANITIZE_ADDRESS__
void* operator new(std::size_t size) {
  if (g_open.load(std::memory_order_relaxed) > 0) g_allocations.fetch_add(1);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

#endif  // __SANITIZE_ADDRESS__

namespace recur::test {
bool AllocationCounter::available() {
#ifdef __SANITIZE_ADDRESS__
  return false;
#else
  return true;
#endif
}
AllocationCounter::AllocationCounter() : start_(g_allocations) {
  ++g_open;
}
AllocationCounter::~AllocationCounter() {
  --g_open;
}
size_t AllocationCounter::count() const {
  return g_allocations - start_;
}
}  // namespace recur::test
