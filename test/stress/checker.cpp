#include "checker.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>
#include <utility>

namespace stress {

Interval make_interval(const std::string &name, int n, int slot, long long id, long long begin,
                       long long end) {
    Interval interval;
    interval.name = name;
    interval.n = n;
    interval.slot = slot;
    interval.id = id;
    interval.begin = begin;
    interval.end = end;
    return interval;
}

namespace {

using Group = std::vector<const Interval *>;

struct Sweep {
    int max_depth = 0;
    bool exceeded = false;
    long long at = 0;  // the first instant where the depth exceeded the limit
};

// Sweeps the non-empty intervals in time order. Intervals are half-open: one that ends at t and
// one that begins at t do not overlap, so at equal times ends (-1) come before begins (+1).
Sweep sweep(const Group &group, int limit) {
    std::vector<std::pair<long long, int>> events;
    for (const Interval *interval : group) {
        if (interval->end <= interval->begin) continue;
        events.emplace_back(interval->begin, +1);
        events.emplace_back(interval->end, -1);
    }
    std::sort(events.begin(), events.end());
    Sweep result;
    int depth = 0;
    for (const auto &[at, step] : events) {
        depth += step;
        result.max_depth = std::max(result.max_depth, depth);
        if (depth > limit && !result.exceeded) {
            result.exceeded = true;
            result.at = at;
        }
    }
    return result;
}

std::string describe(const Interval &interval) {
    return "id " + std::to_string(interval.id) + " (n " + std::to_string(interval.n) + ", slot " +
           std::to_string(interval.slot) + ", " + std::to_string(interval.begin) + ".." +
           std::to_string(interval.end) + ")";
}

// Who held at instant `at` (the first few).
std::string holders_at(const Group &group, long long at) {
    constexpr int kShown = 6;
    std::string out = "at " + std::to_string(at) + ":";
    int shown = 0;
    for (const Interval *interval : group) {
        if (interval->begin > at || at >= interval->end) continue;
        if (++shown > kShown) return out + " ...";
        out += " " + describe(*interval);
    }
    return out;
}

// Per name, for each n k in use: the holders that claimed with n <= k all sit in slots below k,
// so never more than k of them overlap. For the largest k that is the whole name.
void judge_depth(const std::map<std::string, Group> &by_name, Verdict *verdict) {
    for (const auto &[name, group] : by_name) {
        std::set<int> ns;
        for (const Interval *interval : group) ns.insert(interval->n);
        for (const int k : ns) {
            Group subset;
            for (const Interval *interval : group)
                if (interval->n <= k) subset.push_back(interval);
            const Sweep result = sweep(subset, k);
            const std::string label =
                k == *ns.rbegin() ? name : name + " (callers with n <= " + std::to_string(k) + ")";
            verdict->max_depth[label] = result.max_depth;
            if (result.exceeded)
                verdict->too_many.push_back(label + ": " + std::to_string(result.max_depth) +
                                            " holders at once, n is " + std::to_string(k) + "; " +
                                            holders_at(subset, result.at));
        }
    }
}

// Per slot: one holder at a time, ids growing in the order the slot was granted. Empty intervals
// prove nothing about order (their holder may never have held at all) and are left out.
void judge_slots(const std::map<std::pair<std::string, int>, Group> &by_slot, Verdict *verdict) {
    for (const auto &[key, group] : by_slot) {
        const std::string label = key.first + " slot " + std::to_string(key.second);
        const Sweep result = sweep(group, 1);
        if (result.exceeded)
            verdict->slot_shared.push_back(label + ": " + holders_at(group, result.at));
        Group ordered;
        for (const Interval *interval : group)
            if (interval->end > interval->begin && interval->id != 0) ordered.push_back(interval);
        std::sort(ordered.begin(), ordered.end(),
                  [](const Interval *a, const Interval *b) { return a->begin < b->begin; });
        for (std::size_t i = 1; i < ordered.size(); ++i)
            if (ordered[i]->id <= ordered[i - 1]->id)
                verdict->id_order.push_back(label + ": " + describe(*ordered[i]) +
                                            " granted after " + describe(*ordered[i - 1]));
    }
}

}  // namespace

Verdict judge(const std::vector<Interval> &record) {
    Verdict verdict;
    std::map<std::string, Group> by_name;
    std::map<std::pair<std::string, int>, Group> by_slot;
    // An id on several intervals is one claim only if they are its slots -- several permits, on
    // one semaphore or several (a set) -- held from one begin to one end, no slot twice. A set
    // whose client never learned its slots (killed before it read them) has one interval per
    // semaphore, slot unknown. Anything else is an id granted twice.
    std::map<long long, std::vector<const Interval *>> by_id;
    std::set<long long> reported;
    for (const Interval &interval : record) {
        by_name[interval.name].push_back(&interval);
        if (interval.slot >= 0) by_slot[{interval.name, interval.slot}].push_back(&interval);
        if (interval.slot >= interval.n)
            verdict.slot_range.push_back(interval.name + ": " + describe(interval));
        if (interval.id == 0) continue;
        std::vector<const Interval *> &same = by_id[interval.id];
        bool permit = true;
        for (const Interval *other : same)
            permit = permit && other->begin == interval.begin && other->end == interval.end &&
                     (other->name != interval.name ||
                      (interval.slot >= 0 && other->slot >= 0 && other->slot != interval.slot));
        if (!permit && reported.insert(interval.id).second)
            verdict.id_order.push_back("id " + std::to_string(interval.id) + " granted twice");
        same.push_back(&interval);
    }
    judge_depth(by_name, &verdict);
    judge_slots(by_slot, &verdict);
    return verdict;
}

namespace {

std::string millis(long long nanos) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f", static_cast<double>(nanos) / 1e6);
    return text;
}

std::string describe(const Call &call) {
    static constexpr const char *kAnswers[] = {"granted", "NULL", "failed"};
    return call.who + " (wait " + millis(call.wait) + " ms, sent " + millis(call.sent) + ", " +
           kAnswers[static_cast<int>(call.answer)] + " at " + millis(call.received) + ")";
}

// A waited in line from A.sent + margin at the latest until A.received - margin at the earliest
// (or longer: granted, or given up at its deadline). Every caller B that arrived in between
// (B.sent > A.sent + margin) must wait behind A: B served before A.received - margin passed A.
void judge_waiter(const Call &a, const std::vector<const Call *> &by_sent, long long margin,
                  LineVerdict *verdict) {
    const long long until = a.received - margin;
    auto b = std::upper_bound(by_sent.begin(), by_sent.end(), a.sent + margin,
                              [](long long at, const Call *call) { return at < call->sent; });
    for (; b != by_sent.end() && (*b)->sent < until; ++b) {
        const Call &later = **b;
        if (later.answer == Answer::kGranted) {
            if (a.answer == Answer::kGranted) ++verdict->waited_pairs;
            verdict->max_lead = std::max(verdict->max_lead, a.received - later.received);
            if (later.received + margin < a.received)
                verdict->passed.push_back(a.name + ": " + describe(later) + " was served before " +
                                          describe(a) + ", which waited in line first");
        } else if (later.answer == Answer::kNull && later.wait == 0 &&
                   later.received + margin < a.received) {
            ++verdict->refused_pairs;
        }
    }
}

}  // namespace

LineVerdict judge_line(const std::vector<Call> &calls, long long margin, long long slack) {
    LineVerdict verdict;
    std::map<std::string, std::vector<const Call *>> by_name;
    for (const Call &call : calls) {
        by_name[call.name].push_back(&call);
        if (call.wait == 0 || call.answer != Answer::kNull) continue;
        ++verdict.nulls_checked;
        // The server's deadline is its start plus the wait, and it started after the send.
        if (call.received - call.sent < call.wait - slack)
            verdict.early_null.push_back(call.name + ": " + describe(call));
    }
    for (auto &[name, group] : by_name) {
        std::sort(group.begin(), group.end(),
                  [](const Call *a, const Call *b) { return a->sent < b->sent; });
        for (const Call *call : group)
            if (call->wait > 0 && call->answer != Answer::kFailed)
                judge_waiter(*call, group, margin, &verdict);
    }
    return verdict;
}

namespace {

Call make_call(const std::string &name, long long wait, long long sent, long long received,
               Answer answer) {
    Call call;
    call.name = name;
    call.who = "planted";
    call.wait = wait;
    call.sent = sent;
    call.received = received;
    call.answer = answer;
    return call;
}

// The line's judge must be able to fail (times in milliseconds, margin 150, slack 5).
void self_test_line(const std::function<void(const char *, bool)> &expect) {
    constexpr long long kMs = 1000000;
    constexpr long long kMargin = 150 * kMs;
    constexpr long long kSlack = 5 * kMs;
    const auto g = Answer::kGranted;
    const auto null = Answer::kNull;
    auto judged = [&](const std::vector<Call> &calls) {
        return judge_line(calls, kMargin, kSlack);
    };
    expect("a wait-0 caller served while an earlier waiter still waited passed it",
           !judged({make_call("l", 3000 * kMs, 0, 1000 * kMs, g),
                    make_call("l", 0, 200 * kMs, 210 * kMs, g)})
                .passed.empty());
    expect("a later waiter served first passed the earlier one",
           !judged({make_call("l", 3000 * kMs, 0, 1000 * kMs, g),
                    make_call("l", 2000 * kMs, 300 * kMs, 500 * kMs, g)})
                .passed.empty());
    expect("a caller served while an earlier waiter waited until it gave up passed it",
           !judged({make_call("l", 1000 * kMs, 0, 1001 * kMs, null),
                    make_call("l", 2000 * kMs, 300 * kMs, 400 * kMs, g)})
                .passed.empty());
    expect("a wait answered NULL before its time was up is found",
           !judged({make_call("l", 1000 * kMs, 0, 900 * kMs, null)}).early_null.empty());

    // Legal: B served after A; C refused while A waited; D sent too soon after A to say who came
    // first, E served too close to A and B to say who was served first; F on another name; G
    // answered NULL at its deadline, within the clock slack.
    const LineVerdict legal = judged(
        {make_call("l", 3000 * kMs, 0, 1000 * kMs, g),
         make_call("l", 3000 * kMs, 300 * kMs, 1100 * kMs, g),
         make_call("l", 0, 400 * kMs, 401 * kMs, null), make_call("l", 0, 100 * kMs, 110 * kMs, g),
         make_call("l", 0, 700 * kMs, 990 * kMs, g), make_call("other", 0, 300 * kMs, 310 * kMs, g),
         make_call("l", 500 * kMs, 2000 * kMs, 2498 * kMs, null)});
    expect("a legal line passes", legal.passed.empty() && legal.early_null.empty());
    expect("the legal line's covered pairs are counted",
           legal.waited_pairs == 3 && legal.refused_pairs == 1 && legal.nulls_checked == 1);
}

}  // namespace

// The checker must be able to fail: plants each kind of violation in a small record and expects
// it found, and expects a dense but legal record to pass.
bool self_test() {
    int failures = 0;
    auto expect = [&failures](const char *what, bool ok) {
        std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
        if (!ok) ++failures;
    };
    std::vector<Interval> five;
    for (long long i = 0; i < 5; ++i) five.push_back(make_interval("a", 4, -1, 0, 10 * i, 100));
    expect("five overlapping holders of n = 4 are too many", !judge(five).too_many.empty());

    std::vector<Interval> small;
    for (long long i = 0; i < 3; ++i) small.push_back(make_interval("m", 2, -1, 0, i, 50));
    small.push_back(make_interval("m", 4, -1, 0, 0, 50));
    expect("three overlapping n = 2 holders are too many beside an n = 4 one",
           !judge(small).too_many.empty());

    std::vector<Interval> shared{make_interval("a", 4, 1, 1, 0, 11),
                                 make_interval("a", 4, 1, 2, 10, 20)};
    expect("one slot held twice for one tick is found", !judge(shared).slot_shared.empty());

    std::vector<Interval> range{make_interval("m", 2, 3, 7, 0, 10)};
    expect("a slot at or above n is found", !judge(range).slot_range.empty());

    std::vector<Interval> order{make_interval("a", 4, 0, 9, 0, 10),
                                make_interval("a", 4, 0, 8, 10, 20)};
    expect("ids shrinking on one slot are found", !judge(order).id_order.empty());
    std::vector<Interval> twice{make_interval("a", 4, 0, 5, 0, 10),
                                make_interval("a", 4, 1, 5, 0, 11)};
    expect("an id granted twice is found", !judge(twice).id_order.empty());
    std::vector<Interval> one_slot_twice{make_interval("a", 4, 2, 6, 0, 10),
                                         make_interval("a", 4, 2, 6, 0, 10)};
    expect("an id on one slot twice is found", !judge(one_slot_twice).id_order.empty());
    std::vector<Interval> other_name{make_interval("a", 4, 0, 7, 0, 10),
                                     make_interval("b", 4, 1, 7, 5, 10)};
    expect("an id on two semaphores at other times is found", !judge(other_name).id_order.empty());
    std::vector<Interval> set{make_interval("a", 4, 0, 11, 0, 10),
                              make_interval("b", 2, 0, 11, 0, 10)};
    expect("a set (one id on two semaphores, one hold) passes", judge(set).id_order.empty());
    const std::vector<Interval> unknown_slots{make_interval("a", 4, -1, 14, 0, 10),
                                              make_interval("b", 2, -1, 14, 0, 10)};
    expect("so does a set whose slots its client never learned",
           judge(unknown_slots).id_order.empty());
    const std::vector<Interval> unknown_twice{make_interval("a", 4, -1, 15, 0, 10),
                                              make_interval("a", 4, -1, 15, 0, 10)};
    expect("but one id twice on one semaphore, slots unknown, is found",
           !judge(unknown_twice).id_order.empty());
    set.push_back(make_interval("b", 2, 1, 12, 2, 8));
    set.push_back(make_interval("b", 2, 1, 13, 3, 9));
    expect("and a semaphore of the set with a holder too many is found",
           !judge(set).too_many.empty());
    std::vector<Interval> permits{make_interval("a", 4, 0, 8, 0, 10),
                                  make_interval("a", 4, 2, 8, 0, 10),
                                  make_interval("a", 4, 3, 8, 0, 10)};
    const Verdict of_permits = judge(permits);
    expect("a claim of three permits (one id on three slots, one hold) passes",
           of_permits.id_order.empty() && of_permits.too_many.empty());
    permits.push_back(make_interval("a", 4, 1, 9, 5, 10));
    permits.push_back(make_interval("a", 4, 1, 10, 5, 10));
    expect("and two more holders beside it are too many", !judge(permits).too_many.empty());

    // Legal: chains of touching holds on every slot, two n = 2 and two n = 4 holders at once,
    // and any number of empty intervals.
    std::vector<Interval> legal;
    long long id = 1;
    for (int slot = 0; slot < 4; ++slot)
        for (long long i = 0; i < 3; ++i)
            legal.push_back(make_interval("m", slot < 2 ? 2 : 4, slot, id++, 10 * i, 10 * i + 10));
    for (int i = 0; i < 5; ++i) legal.push_back(make_interval("m", 2, -1, 0, 15, 15));
    Verdict verdict = judge(legal);
    expect("a full but legal record passes",
           verdict.too_many.empty() && verdict.slot_shared.empty() && verdict.slot_range.empty() &&
               verdict.id_order.empty());
    expect("the legal record's depth is seen",
           verdict.max_depth["m"] == 4 && verdict.max_depth["m (callers with n <= 2)"] == 2);
    self_test_line(expect);
    std::printf("self-test: %d failed\n", failures);
    return failures == 0;
}

}  // namespace stress
