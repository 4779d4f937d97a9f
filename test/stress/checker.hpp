// The stress test's checker: from a record of claims -- which slot of which semaphore was held,
// from when to when, on one clock -- it finds every moment a semaphore had more holders than
// allowed, a slot held twice, a slot out of range and ids out of order; from a record of calls
// that could wait in line, every caller served before one that surely waited longer, and every
// wait that gave up early. Pure C++, no server; self_test() plants violations in made-up records
// and checks that each is found.
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

enum class Answer : unsigned char { kGranted, kNull, kFailed };

// One call that could wait in line or pass someone waiting, as its client saw it (nanoseconds on
// the record's one clock). kFailed: an error or a lost connection, whatever the server did.
struct Call {
    std::string name;
    std::string who;     // for reports
    long long wait = 0;  // 0: answers at once, and must not pass anyone waiting
    long long sent = 0;
    long long received = 0;
    Answer answer = Answer::kFailed;
};

// `margin` bounds how long a call takes to reach the server and its answer to come back: a call
// sent more than `margin` after another's send arrived later, and a caller served more than
// `margin` before another's answer came back was served first.
struct LineVerdict {
    std::vector<std::string> passed;      // served before a waiter that surely came first
    std::vector<std::string> early_null;  // a wait answered NULL before its time was up
    long waited_pairs = 0;   // both served, the later one sent while the first surely waited
    long refused_pairs = 0;  // a wait-0 caller refused while another surely waited
    long nulls_checked = 0;  // waits answered NULL
    // Over the pairs judged: the most a later caller's answer came before the waiter's. More
    // than the margin is a violation; close to it, the margin is too tight for the machine.
    long long max_lead = 0;
};

LineVerdict judge_line(const std::vector<Call> &calls, long long margin, long long slack);

// Finds the violations planted in made-up records; prints one line per case.
bool self_test();

}  // namespace stress
