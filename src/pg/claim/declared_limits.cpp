#include "pg/base/argument_checks.hpp"
#include "pg/claim/declared_limits.hpp"
#include "pg/store/declarations.hpp"

namespace pgsem {

namespace {

// As Postgres decides who may use an object: membership counts when it inherits privileges
// (has_privs_of_role), superusers may do anything, and the owner may always.
bool may_claim(const Declaration &d) {
    if (d.public_claims) return true;
    const Oid user = GetUserId();
    if (has_privs_of_role(user, d.owner)) return true;
    for (int i = 0; i < d.grantee_count; ++i)
        if (has_privs_of_role(user, d.grantees[i])) return true;
    return false;
}

// A lease (asked for by a claim or a renewal) within the declaration's maximum, else 22023.
void require_lease_within(const char *function, const Declaration &d, const text *name, int64 lease,
                          const char *advice) {
    if (d.max_lease == 0 || lease <= d.max_lease) return;
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: a lease of %s is above the declared maximum of semaphore \"%s\"",
                           function, interval_text(lease), text_to_cstring(name)),
                    errdetail("Declaration \"%s\" allows leases of at most %s%s", d.pattern,
                              interval_text(d.max_lease), advice)));
}

}  // namespace

namespace {

// Undeclared (or undeclared since): 42501 under pgsem.require_declared.
void require_undeclared_allowed(const char *function, const text *name) {
    if (!require_declared) return;
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("%s: semaphore \"%s\" is not declared", function, text_to_cstring(name)),
             errdetail("pgsem.require_declared is on: only declared semaphores may be claimed."),
             errhint("An owner of the database declares it: sem_declare(name, n).")));
}

// What a declaration says of a claim, at its first look and at every look while it waits: the
// right to claim, the lease, the permits within n; and the holders above a lowered n.
void require_may_claim(const char *function, const Declaration &d, const text *name) {
    if (!may_claim(d))
        ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                        errmsg("%s: permission denied to claim semaphore \"%s\"", function,
                               text_to_cstring(name)),
                        errdetail("Role \"%s\" lacks the right to claim of declaration \"%s\".",
                                  GetUserNameFromId(GetUserId(), false), d.pattern),
                        errhint("Its owner gives it with sem_grant('%s', role).", d.pattern)));
}

void apply(const char *function, const Declaration &d, SlotRequest *request) {
    require_may_claim(function, d, request->name);
    request->n = request->asked_n != 0 ? Min(request->asked_n, d.n) : d.n;
    request->declared_n = d.n;
    request->peak_n = d.peak_n > d.n ? d.peak_n : 0;
    if (request->kind == ClaimKind::kLease)
        require_lease_within(function, d, request->name, request->lease,
                             "; a longer job renews its lease (sem_renew).");
    require_valid_permits(function, false, request->permits, request->n);
}

}  // namespace

void apply_declaration(const char *function, SlotRequest *request, int64 *wait) {
    const Declaration *d = find_declaration(request->name);
    if (d == nullptr) {
        require_undeclared_allowed(function, request->name);
        if (request->asked_n == 0)
            ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                            errmsg("%s: n must not be null: semaphore \"%s\" is not declared",
                                   function, text_to_cstring(request->name))));
        request->n = request->asked_n;
        require_valid_permits(function, false, request->permits, request->n);
        return;
    }
    if (request->asked_n > d->n && may_claim(*d))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: n %d is above the declared n of semaphore \"%s\"", function,
                               request->asked_n, text_to_cstring(request->name)),
                        errdetail("Declaration \"%s\" says n = %d. Leave n out to claim below it, "
                                  "or pass a smaller n to claim below that.",
                                  d->pattern, d->n)));
    apply(function, *d, request);
    if (d->max_wait >= 0 && *wait > d->max_wait) *wait = d->max_wait;
}

void reapply_declaration(const char *function, SlotRequest *request, TimestampTz since,
                         TimestampTz *deadline) {
    const Declaration *d = find_declaration(request->name);
    if (d == nullptr) {
        require_undeclared_allowed(function, request->name);
        // With no n of its own, it keeps the n it had.
        if (request->asked_n != 0) request->n = request->asked_n;
        request->declared_n = request->peak_n = 0;
        require_valid_permits(function, false, request->permits, request->n);
        return;
    }
    apply(function, *d, request);
    if (d->max_wait >= 0) *deadline = Min(*deadline, since + d->max_wait);
}

namespace {

// A bucket's rule within a declaration: its n and burst at most the declared n, its per at most
// the declared maximum lease (as a rate limit's window is bound), and the right to claim.
void require_bucket_within(const char *function, const Declaration &d, const text *name,
                           const BucketBounds &bucket) {
    require_may_claim(function, d, name);
    const struct {
        const char *what;
        int32 value;
    } counts[] = {{"n", bucket.n}, {"burst", bucket.burst}};
    for (const auto &count : counts)
        if (count.value > d.n)
            ereport(ERROR,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                     errmsg("%s: %s %d is above the declared n of \"%s\"", function, count.what,
                            count.value, text_to_cstring(name)),
                     errdetail("Declaration \"%s\" says n = %d: a bucket's n and burst are at "
                               "most that.",
                               d.pattern, d.n)));
    require_lease_within(function, d, name, bucket.per, ": a bucket's per is bound as a lease is.");
}

}  // namespace

void apply_bucket_declaration(const char *function, const text *name, const BucketBounds &bucket,
                              int64 *wait) {
    const Declaration *d = find_declaration(name);
    if (d == nullptr) {
        require_undeclared_allowed(function, name);
        return;
    }
    require_bucket_within(function, *d, name, bucket);
    if (d->max_wait >= 0 && *wait > d->max_wait) *wait = d->max_wait;
}

void reapply_bucket_declaration(const char *function, const text *name, const BucketBounds &bucket,
                                TimestampTz since, TimestampTz *deadline) {
    const Declaration *d = find_declaration(name);
    if (d == nullptr) {
        require_undeclared_allowed(function, name);
        return;
    }
    require_bucket_within(function, *d, name, bucket);
    if (d->max_wait >= 0) *deadline = Min(*deadline, since + d->max_wait);
}

void require_right_to_claim(const char *function, const text *name) {
    const Declaration *d = find_declaration(name);
    if (d == nullptr)
        require_undeclared_allowed(function, name);
    else
        require_may_claim(function, *d, name);
}

void require_lease_within_declared(const char *function, const text *name, int64 lease) {
    const Declaration *d = find_declaration(name);
    if (d != nullptr) require_lease_within(function, *d, name, lease, ".");
}

}  // namespace pgsem
