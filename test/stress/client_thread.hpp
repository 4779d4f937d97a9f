// What every client thread of the stress test has: a connection, the killer's view of it (its
// Target), a seeded random source, and reconnecting after the killer struck.
#pragma once

#include <exception>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "pq.hpp"
#include "workload.hpp"

namespace stress {

// Which statement on a client's own connection failed: the one that ends a hold (a COMMIT or
// ROLLBACK, a release) or any other.
enum class Step : unsigned char { kOther, kCommit, kRelease };

class ClientThread {
  protected:
    // `role` names the thread in problems ("client 3: ...").
    ClientThread(Shared *shared, int index, std::uint64_t seed, std::string role)
        : shared_(*shared),
          target_(*shared->targets[index]),
          index_(index),
          rng_(seed),
          role_(std::move(role)) {}

    int uniform(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }
    bool chance(int percent) { return uniform(0, 99) < percent; }
    static void sleep_millis(int millis) { std::this_thread::sleep_for(milliseconds(millis)); }
    [[nodiscard]] std::string who() const { return role_ + " " + std::to_string(index_) + ": "; }

    void set_phase(Phase phase) {
        const std::lock_guard<std::mutex> lock(target_.mutex);
        target_.phase = phase;
    }
    std::optional<Clock::time_point> killed_at() {
        const std::lock_guard<std::mutex> lock(target_.mutex);
        return target_.killed_at;
    }

    // Connects (again) as application `app`, telling the killer which backend to strike from
    // now on. False, with a problem noted, when the server does not take the connection.
    bool reconnect(const std::string &app, PQnoticeProcessor notices = nullptr) {
        {
            const std::lock_guard<std::mutex> lock(target_.mutex);
            target_.pid = 0;
            target_.phase = Phase::kReconnecting;
        }
        const bool first = !connected_once_;
        conn_.reset();
        std::string error;
        for (int attempt = 0; attempt < 50 && conn_ == nullptr; ++attempt) {
            conn_ = connect_to(shared_.options.conninfo, app, &error);
            if (conn_ == nullptr) sleep_millis(20);
        }
        if (conn_ == nullptr) {
            shared_.problems.note(kUnexpectedError, who() + "cannot connect: " + error);
            return false;
        }
        connected_once_ = true;
        if (!first) ++shared_.stats.reconnects;
        if (notices != nullptr) PQsetNoticeProcessor(conn_.get(), notices, &shared_);
        const std::lock_guard<std::mutex> lock(target_.mutex);
        target_.pid = PQbackendPID(conn_.get());
        target_.phase = Phase::kIdle;
        target_.killed_at.reset();
        target_.cancelled_at.reset();
        return true;
    }

    ~ClientThread() = default;

    // Runs `sql` on the thread's own connection; a failure goes to fail(), and nothing returns.
    std::optional<Reply> run_main(const std::string &sql,
                                  const std::vector<std::string> &params = {},
                                  Step step = Step::kOther) {
        Reply reply = exec(conn_.get(), sql, params);
        if (reply.ok()) return reply;
        fail(sql, reply, step);
        return std::nullopt;
    }
    // What a failed statement means for the hold and the record differs by kind of client.
    virtual void fail(const std::string &sql, const Reply &reply, Step step) = 0;

    // The thread is done: the killer leaves it alone.
    void finish() {
        {
            const std::lock_guard<std::mutex> lock(target_.mutex);
            target_.pid = 0;
            target_.phase = Phase::kIdle;
        }
        conn_.reset();
    }

    Shared &shared_;
    Target &target_;
    int index_;
    std::mt19937_64 rng_;
    Conn conn_;

  private:
    bool connected_once_ = false;
    std::string role_;
};

// A client thread from start to end: runs a `Client` (a ClientThread with run()); an exception
// becomes a noted problem, named after `role` and the thread's index.
template <typename Client>
void run_client_thread(Shared *shared, int index, std::uint64_t seed, const char *role) {
    try {
        Client client(shared, index, seed);
        client.run();
    } catch (const std::exception &e) {
        shared->problems.note(kUnexpectedError, std::string(role) + " " + std::to_string(index) +
                                                    ": exception: " + e.what());
    }
    --shared->running;
}

}  // namespace stress
