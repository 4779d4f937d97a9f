// How fast a freed slot reaches the first waiter:
//  - hand-off: a holder frees its slot (a lease's release, a transaction claim's COMMIT, a
//    session claim's release) while one client waits in line; from just before the holder sends
//    the release to the moment the waiter's claim returns, both on this machine's clock;
//  - lease expiry: a holder takes a short lease and never releases it; from the moment the lease
//    ran out to the moment the waiter was granted, both on the server's clock.
#pragma once

#include <vector>

namespace bench {

enum class ClaimKind { kLease, kTransaction, kSession };

// Milliseconds per sample.
std::vector<double> handoff_latencies(ClaimKind kind, int samples);
std::vector<double> expiry_latencies(int samples, int lease_millis);

}  // namespace bench
