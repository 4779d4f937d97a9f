-- What any table-backed claim pays at least: insert a row, then update it, in two transactions.
\set name_no random(1, :names)
INSERT INTO floor_claims (name, claimed_at)
VALUES ('bench-' || (:group * 1000000 + :name_no), now()) RETURNING id \gset
UPDATE floor_claims SET released_at = now() WHERE id = :id;
