-- Shared by the tests that follow (pg_regress runs them in name order in one database).
-- try(sql) runs a statement and reports its error as "SQLSTATE: message (detail)" instead of
-- failing; its subtransaction rolls back whatever the statement did. Claim ids and timestamps in
-- messages are masked so that the expected output does not depend on test order or the clock.
CREATE FUNCTION try(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    detail text;
    result text;
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    result := SQLSTATE || ': ' || SQLERRM || coalesce(' (' || nullif(detail, '') || ')', '');
    result := regexp_replace(result, 'claim \d+', 'claim <id>', 'g');
    result := regexp_replace(result, 'OID \d+', 'OID <oid>', 'g');
    RETURN regexp_replace(result, '\d{4}-\d\d-\d\d [0-9:.]+[+-]\d\d', '<time>', 'g');
END $$;
GRANT EXECUTE ON FUNCTION try(text) TO PUBLIC;
SELECT try('SELECT 1') AS works, try('SELECT 1/0') AS reports;
