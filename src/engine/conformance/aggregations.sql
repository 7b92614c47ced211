-- GROUP BY queries over the table `t` of aggregation_conformance_integration_test.cc, one a line,
-- each run by sluice's streaming aggregation and by Spark (both of its modes) and compared.
SELECT k, count(*), count(x), count(x, d), sum(x), avg(x), min(x), max(x) FROM t GROUP BY k
SELECT k, sum(b), avg(b), min(b), max(b) FROM t GROUP BY k
SELECT k, sum(d), avg(d), min(d), max(d) FROM t GROUP BY k
SELECT g, sum(d * d), avg(d / 3) FROM t GROUP BY g
SELECT f, count(*) FROM t GROUP BY f
SELECT k, min(f), max(f), sum(f), avg(f) FROM t GROUP BY k
SELECT k, first(x), last(x), first(x, true), last(x, true), first(s), last(f) FROM t GROUP BY k
SELECT count(*), count(k), sum(x), max(s), min(dt), avg(d) FROM t
SELECT count(*), sum(x) FROM t WHERE x > 100
SELECT k, count(*) FROM t GROUP BY k HAVING count(*) > 2
SELECT k, sum(x) AS total FROM t GROUP BY k HAVING total > 5
SELECT upper(k) AS uk, sum(x) * 2 + 1 AS y, max(x) - min(x) AS spread FROM t GROUP BY k
SELECT x % 2 AS parity, count(*) FROM t GROUP BY x % 2
SELECT k, g, count(*), sum(b) FROM t GROUP BY k, g
SELECT g, count(DISTINCT k), count(DISTINCT f), count(DISTINCT d) FROM t GROUP BY g
SELECT g, sort_array(collect_set(k)), collect_list(x), size(collect_list(s)), array_agg(d) FROM t GROUP BY g
SELECT k, approx_count_distinct(x), approx_count_distinct(s, 0.1) FROM t GROUP BY k
SELECT k, sum(s), avg(s) FROM t GROUP BY k
SELECT dt, count(*), max(k) FROM t GROUP BY dt
SELECT k, max(s), min(s), max(dt) FROM t GROUP BY k
SELECT sum(x) / count(x) AS manual_avg, sum(b) % 7 AS r FROM t
SELECT k, count(*) FROM t WHERE x > 1 OR x IS NULL GROUP BY k
SELECT CASE WHEN x > 3 THEN 'big' ELSE 'small' END AS size, count(*), sum(x) FROM t GROUP BY CASE WHEN x > 3 THEN 'big' ELSE 'small' END
SELECT k, sum(CASE WHEN s = '3' THEN -x ELSE x END) AS net FROM t GROUP BY k
SELECT g, sum(b * 1000000000000000) FROM t GROUP BY g
SELECT k, mean(x), min(DISTINCT x), max(DISTINCT d) FROM t GROUP BY k
SELECT k, x FROM t GROUP BY k
SELECT k, sum(max(x)) FROM t GROUP BY k
SELECT count(*) FROM t GROUP BY sum(x)
SELECT k, count(*) FROM t WHERE sum(x) > 1 GROUP BY k
SELECT k, sum(k) FROM t GROUP BY k
SELECT k, sum(true) FROM t GROUP BY k
SELECT unix_micros(window.start) AS s, unix_micros(window.end) AS e, count(*), sum(x) FROM t GROUP BY window(dt, '2 days')
SELECT unix_micros(window.start) AS s, count(*), max(x) FROM t GROUP BY window(dt, '1 week', '1 week', '1 day') HAVING count(*) > 1
SELECT unix_micros(window.start) AS s, unix_micros(window.end) AS e, count(*), sum(x), first(x), last(x) FROM t GROUP BY window(dt, '2 days', '1 day')
SELECT k, unix_micros(window.start) AS s, count(*), collect_list(x) FROM t GROUP BY k, window(dt, '10 days', '3 days', '1 day')
SELECT unix_micros(window.end) AS e, count(DISTINCT k) FROM t GROUP BY window(dt, '1 week', '36 hours') HAVING count(*) > 1
SELECT count(*) FROM t GROUP BY window(dt, '2 days'), window(dt, '3 days', '1 day')
