-- Tables for the plain-SQL approaches, next to pgsem, in one database.
CREATE EXTENSION pgsem;
CREATE TABLE seed_requests (
    id bigserial PRIMARY KEY,
    name text NOT NULL,
    created_at timestamptz NOT NULL,
    completed_at timestamptz,
    timed_out_at timestamptz,
    slot integer NOT NULL
);
CREATE UNIQUE INDEX one_per_slot ON seed_requests (name, slot)
    WHERE completed_at IS NULL AND timed_out_at IS NULL;
CREATE TABLE floor_claims (
    id bigserial PRIMARY KEY,
    name text NOT NULL,
    claimed_at timestamptz NOT NULL,
    released_at timestamptz
);
