// What waiting costs while nothing moves: `waiters` clients wait in line for a semaphore whose
// only slot is held, and the CPU time their backends use over `seconds` is read from /proc (the
// scheduler's nanoseconds in schedstat where the kernel keeps them, clock ticks in stat
// otherwise).
#pragma once

namespace bench {

struct IdleResult {
    int waiters = 0;
    double seconds = 0;
    double cpu_seconds = 0;  // of all waiting backends together
    double percent_of_core = 0;
    bool nanosecond_clock = false;  // schedstat, not clock ticks
};

IdleResult idle_waiter_cpu(int waiters, int seconds);

}  // namespace bench
