#include "core/claim_tally.hpp"

#include <cstdint>
#include <limits>

namespace pgsem::core {

namespace {

std::uint64_t micros(std::int64_t value) noexcept {
    return value > 0 ? static_cast<std::uint64_t>(value) : 0;
}

void add(std::uint64_t &total, std::uint64_t delta) noexcept {
    const std::uint64_t room = std::numeric_limits<std::uint64_t>::max() - total;
    total = delta > room ? std::numeric_limits<std::uint64_t>::max() : total + delta;
}

}  // namespace

ClaimTally tally_answer(ClaimOutcome outcome, std::int32_t permits, std::int64_t waited) noexcept {
    ClaimTally tally;
    switch (outcome) {
        case ClaimOutcome::kGranted:
            tally.granted = 1;
            break;
        case ClaimOutcome::kGrantedAfterWait:
            tally.granted_after_wait = 1;
            break;
        case ClaimOutcome::kRefused:
            tally.refused = 1;
            break;
        case ClaimOutcome::kTimedOut:
            tally.timed_out = 1;
            break;
        case ClaimOutcome::kWaitEnded:
            tally.wait_errors = 1;
            break;
    }
    if (outcome == ClaimOutcome::kGranted || outcome == ClaimOutcome::kGrantedAfterWait)
        tally.permits_granted = permits > 0 ? static_cast<std::uint64_t>(permits) : 0;
    if (outcome != ClaimOutcome::kGranted && outcome != ClaimOutcome::kRefused) {
        tally.wait_micros = micros(waited);
        tally.wait_max_micros = tally.wait_micros;
    }
    return tally;
}

ClaimTally tally_release(std::int64_t held) noexcept {
    ClaimTally tally;
    tally.released = 1;
    tally.held_micros = micros(held);
    return tally;
}

void merge(ClaimTally &total, const ClaimTally &delta) noexcept {
    add(total.granted, delta.granted);
    add(total.granted_after_wait, delta.granted_after_wait);
    add(total.refused, delta.refused);
    add(total.timed_out, delta.timed_out);
    add(total.wait_errors, delta.wait_errors);
    add(total.released, delta.released);
    add(total.expired_permits, delta.expired_permits);
    add(total.renewed, delta.renewed);
    add(total.permits_granted, delta.permits_granted);
    add(total.wait_micros, delta.wait_micros);
    if (delta.wait_max_micros > total.wait_max_micros)
        total.wait_max_micros = delta.wait_max_micros;
    add(total.held_micros, delta.held_micros);
}

std::uint64_t paused_by(const PauseSpan &span, std::int64_t now) noexcept {
    std::uint64_t total = span.paused_micros;
    if (span.until > span.from && now > span.from)
        add(total, micros((now < span.until ? now : span.until) - span.from));
    return total;
}

void pause_change(PauseSpan &span, std::int64_t now, std::int64_t until) noexcept {
    span.paused_micros = paused_by(span, now);
    span.from = now;
    span.until = until > now ? until : 0;
}

bool empty(const ClaimTally &tally) noexcept {
    return tally.granted == 0 && tally.granted_after_wait == 0 && tally.refused == 0 &&
           tally.timed_out == 0 && tally.wait_errors == 0 && tally.released == 0 &&
           tally.expired_permits == 0 && tally.renewed == 0 && tally.permits_granted == 0 &&
           tally.wait_micros == 0 && tally.wait_max_micros == 0 && tally.held_micros == 0;
}

}  // namespace pgsem::core
