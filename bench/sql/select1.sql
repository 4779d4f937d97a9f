-- The floor of any SQL call: a round trip that does nothing.
SELECT 1;
