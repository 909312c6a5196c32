// Counts heap allocations made by any thread while a scope is open, through a replaced global
// operator new (tests/support/alloc_counter.cc). Used to prove that step loops do not allocate.
#pragma once

#include <cstddef>

namespace recur::test {

class AllocationCounter {
 public:
  AllocationCounter();
  ~AllocationCounter();
  size_t count() const;
  // False in sanitizer builds, where the counting operator new is not installed.
  static bool available();

 private:
  size_t start_;
};

}  // namespace recur::test
