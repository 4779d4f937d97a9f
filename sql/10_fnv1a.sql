-- fnv1a_64: the published value of the seed article, bytes not characters, the full 64 bits.
SELECT fnv1a_64('223 345') AS seed_key;
SELECT fnv1a_64('223 345') = 3755351481708176604 AS matches_seed_article;

-- Published FNV-1a 64 vectors, as two's-complement bigints.
SELECT k, fnv1a_64(k) AS hash, to_hex(fnv1a_64(k)) AS hex
  FROM (VALUES (''), ('a'), ('foobar'), (E'chongo was here!\n')) AS v(k);

-- About half of all random keys hash to 2^63 or more: they come out negative, in range.
SELECT count(*) FILTER (WHERE fnv1a_64(md5(g::text)) < 0) BETWEEN 400 AND 600 AS about_half
  FROM generate_series(1, 1000) g;

-- text hashes its bytes in the database encoding (UTF-8 here): same as the bytea of those bytes.
SELECT fnv1a_64('é') = fnv1a_64(convert_to('é', 'UTF8')) AS text_is_its_utf8_bytes,
       fnv1a_64('é') = fnv1a_64('\xc3a9'::bytea) AS two_bytes,
       octet_length('é') AS bytes;
SELECT fnv1a_64('ключ') AS cyrillic, fnv1a_64('鍵') AS cjk, fnv1a_64('🔒') AS emoji;

-- bytea, including the empty value and bytes no text can hold.
SELECT fnv1a_64(''::bytea) AS empty_bytea, fnv1a_64(''::text) AS empty_text,
       fnv1a_64('\x00ff'::bytea) AS nul_and_ff;

-- NULL in, NULL out (the function is STRICT).
SELECT fnv1a_64(NULL::text) IS NULL AS null_text, fnv1a_64(NULL::bytea) IS NULL AS null_bytea;

-- Large keys hash fine (TOASTed values are detoasted).
SELECT fnv1a_64(repeat('x', 1000000)) = fnv1a_64(convert_to(repeat('x', 1000000), 'UTF8'))
       AS large_key;

-- Immutable and parallel safe, so it can be indexed and used in parallel plans.
SELECT p.oid::regprocedure, p.provolatile, p.proparallel, p.proisstrict
  FROM pg_proc p WHERE p.proname = 'fnv1a_64' ORDER BY 1;
CREATE TEMP TABLE keyed (k text);
CREATE INDEX ON keyed (fnv1a_64(k));
DROP TABLE keyed;
