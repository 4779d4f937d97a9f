-- try(sql): runs a statement and reports its error as "SQLSTATE: message (detail)" instead of
-- failing; its subtransaction rolls back whatever the statement did. Claim ids, role OIDs, pids
-- and timestamps in messages are masked so that the expected output depends neither on the order the
-- tests run in nor on the clock. Each test that uses it includes this file itself, so that every
-- test runs on its own.
CREATE OR REPLACE FUNCTION try(sql text) RETURNS text LANGUAGE plpgsql AS $$
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
    result := regexp_replace(result, '([Pp])rocess \d+', '\1rocess <pid>', 'g');
    RETURN regexp_replace(result, '\d{4}-\d\d-\d\d [0-9:.]+[+-]\d\d', '<time>', 'g');
END $$;
GRANT EXECUTE ON FUNCTION try(text) TO PUBLIC;
