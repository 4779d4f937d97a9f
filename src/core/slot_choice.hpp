// Which slot of a semaphore a claim tries, and what an existing claim row means for its slot.
//
// Pure C++ (no Postgres header). The glue (src/pg/claim/slot_search.cpp) reads index entries and
// asks these functions what they mean; it never decides slot policy itself.
#pragma once

#include "core/cpp_only.hpp"

#include <cstdint>
#include <optional>

namespace pgsem::core {

// Up to kLockedScanMaxSlots slots a claim tries slot 0, 1, ... in turn, reading each under its
// slot lock: one read of the slot's index entries per slot tried. Every claim and release leaves
// a dead entry that vacuum cannot remove while any snapshot older than it exists, and a slot's
// reader walks them all; an unlocked look ahead of the locked read would walk them twice.
// Up to kOrderedScanMaxSlots a claim finds the lowest free slot by one ordered scan first (one
// scan beats taking many slot locks of a crowded semaphore), then reads it again under its lock.
// Above it, a claim first probes random slots (constant expected cost while a fair share of the
// slots is free), and falls back to the ordered scan only when kRandomProbes probes all hit.
inline constexpr std::int32_t kLockedScanMaxSlots = 8;
inline constexpr std::int32_t kOrderedScanMaxSlots = 64;
inline constexpr std::int32_t kRandomProbes = 64;
// A rate limit's grant whose window has used every slot spends this many of its probes before
// it reads the index of grants in grant order: a probe finds a passed grant's slot in one read
// while the window has room to spare, the index read takes a dozen; on a window that is nearly
// full, the probes cost two reads more.
inline constexpr std::int32_t kRateFirstProbes = 2;

// What one claim row, as seen by a dirty read, means for its slot right now.
enum class Occupancy : std::uint8_t {
    kVacant,   // released or timed out: it no longer occupies the slot
    kHeld,     // occupies the slot; the claimer must not touch it
    kExpired,  // lease ran out and nobody is acting on it: a claimer may record it as timed out
};

struct ClaimRowState {
    bool ended;               // released or recorded as timed out
    std::int64_t expires_at;  // server time, microseconds
    bool insert_in_progress;  // inserted by another transaction that is still open
    bool change_in_progress;  // being updated or deleted by another open transaction (a dirty
                              // read does not report mere row locks: a fence shows as expired
                              // here, and the claimer's lock attempt then finds it held)
};

// A row inserted or changed by an open transaction counts as held whatever its lease says: the
// claimer cannot know how that transaction ends without waiting for it, and claims never wait.
Occupancy classify(const ClaimRowState &row, std::int64_t now) noexcept;

// What a claim is to whoever acts on it by id (release, renew, fence, held).
enum class ClaimStatus : std::uint8_t {
    kEnded,        // released or timed out
    kUncommitted,  // made by a transaction that is still open
    kExpired,      // its lease ran out, not yet recorded
    kLive,
};
ClaimStatus status_of(const ClaimRowState &row, std::int64_t now) noexcept;

// Finds the lowest slot in [0, n) that no row holds, from rows fed in ascending slot order
// (several rows may share a slot: old versions, a timed-out claim beside its successor).
class LowestFreeSlot {
  public:
    explicit LowestFreeSlot(std::int32_t n, std::int32_t first = 0) noexcept
        : n_(n), cursor_(first) {}

    // Returns the answer as soon as it is known: the first slot at or above `first` that no row
    // holds. Rows below the cursor are ignored.
    std::optional<std::int32_t> observe(std::int32_t slot, bool held) noexcept;
    // After the last row: the answer, or nothing when every slot in [first, n) is held.
    [[nodiscard]] std::optional<std::int32_t> finish() const noexcept;

  private:
    std::int32_t n_;
    std::int32_t cursor_;
};

// A pseudo-random walk over [0, n) that visits every slot once before repeating: start + i*step
// mod n with step coprime to n. Two claimers with different seeds rarely contend for one slot.
class ProbeSequence {
  public:
    ProbeSequence() noexcept = default;  // a walk over [0, 1), until assigned a real one
    ProbeSequence(std::int32_t n, std::uint64_t seed) noexcept;
    std::int32_t next() noexcept;

  private:
    std::int64_t n_ = 1;
    std::int64_t current_ = 0;
    std::int64_t step_ = 1;
};

// now + lease, saturating instead of overflowing near the end of the timestamp range.
std::int64_t lease_end(std::int64_t now, std::int64_t lease_micros) noexcept;

// Whether a claim row is old enough to be pruned from the history: it ended (or its lease ran
// out) at least retention_micros before now. A negative retention keeps history forever.
bool prunable(bool ended, std::int64_t ended_at, std::int64_t expires_at, std::int64_t now,
              std::int64_t retention_micros) noexcept;

}  // namespace pgsem::core
