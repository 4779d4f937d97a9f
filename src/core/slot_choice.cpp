#include "core/slot_choice.hpp"

#include <cstdint>
#include <numeric>

namespace pgsem::core {

Occupancy classify(const ClaimRowState &row, std::int64_t now) noexcept {
    if (row.ended) return Occupancy::kVacant;
    if (row.insert_in_progress || row.change_in_progress) return Occupancy::kHeld;
    return row.expires_at > now ? Occupancy::kHeld : Occupancy::kExpired;
}

ClaimStatus status_of(const ClaimRowState &row, std::int64_t now) noexcept {
    if (row.ended) return ClaimStatus::kEnded;
    if (row.insert_in_progress) return ClaimStatus::kUncommitted;
    return row.expires_at > now ? ClaimStatus::kLive : ClaimStatus::kExpired;
}

std::optional<std::int32_t> LowestFreeSlot::observe(std::int32_t slot, bool held) noexcept {
    if (cursor_ >= n_) return std::nullopt;
    if (slot > cursor_) return cursor_;  // every row of the cursor's slot has gone by: none held it
    if (slot == cursor_ && held) ++cursor_;
    return std::nullopt;
}

std::optional<std::int32_t> LowestFreeSlot::finish() const noexcept {
    if (cursor_ < n_) return cursor_;
    return std::nullopt;
}

ProbeSequence::ProbeSequence(std::int32_t n, std::uint64_t seed) noexcept
    : n_(n > 0 ? n : 1), current_(0), step_(1) {
    const auto n64 = static_cast<std::uint64_t>(n_);
    current_ = static_cast<std::int64_t>(seed % n64);
    if (n_ > 1) {
        // Any step in [1, n) coprime to n makes the walk a permutation; start from a seeded one.
        step_ = static_cast<std::int64_t>(1 + (seed >> 32U) % (n64 - 1));
        while (std::gcd(step_, n_) != 1) step_ = step_ % (n_ - 1) + 1;
    }
}

std::int32_t ProbeSequence::next() noexcept {
    const auto slot = static_cast<std::int32_t>(current_);
    current_ = (current_ + step_) % n_;
    return slot;
}

std::int64_t lease_end(std::int64_t now, std::int64_t lease_micros) noexcept {
    if (lease_micros > 0 && now > INT64_MAX - lease_micros) return INT64_MAX;
    return now + lease_micros;
}

bool prunable(bool ended, std::int64_t ended_at, std::int64_t expires_at, std::int64_t now,
              std::int64_t retention_micros) noexcept {
    if (retention_micros < 0) return false;
    const std::int64_t end = ended ? ended_at : expires_at;
    if (!ended && expires_at > now) return false;  // still held
    return end <= now - retention_micros;
}

}  // namespace pgsem::core
