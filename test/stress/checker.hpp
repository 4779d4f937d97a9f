// The stress test's checker: from a record of claims -- which slot of which semaphore was held,
// from when to when, on one clock -- it finds every moment a semaphore had more holders than
// allowed, a slot held twice, a slot out of range and ids out of order. Pure C++, no server;
// self_test() plants violations in made-up records and checks that each is found.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace stress {

// One claim as a record saw it: held throughout [begin, end), on the record's one clock.
struct Interval {
    std::string name;
    int n = 0;
    int slot = -1;     // -1: unknown
    long long id = 0;  // 0: unknown
    long long begin = 0;
    long long end = 0;
};

struct Verdict {
    std::vector<std::string> too_many;     // more holders at once than allowed
    std::vector<std::string> slot_shared;  // one slot held twice at once
    std::vector<std::string> slot_range;   // a slot at or above its claim's n
    std::vector<std::string> id_order;     // repeated ids, ids not increasing per slot
    std::map<std::string, int> max_depth;  // deepest overlap per name (and per n group)
};

Interval make_interval(const std::string &name, int n, int slot, long long id, long long begin,
                       long long end);

// Judges a whole record.
Verdict judge(const std::vector<Interval> &record);

// Finds the violations planted in made-up records; prints one line per case.
bool self_test();

}  // namespace stress
