-- Comparison and logic, three-valued.
1 = 1
1 = 1.0
1 <=> null
null <=> null
null = null
1 < 2
'a' < 'b'
'a' < 'B'
'abc' = 'abc '
1 = '1'
'1.0' = 1
'abc' = 1
true = 'true'
1 != 2
1 <> 1
2 >= 2
cast('NaN' as double) = cast('NaN' as double)
cast('NaN' as double) > 1e308
0.0D = -0.0D
date'2024-02-29' < date'2024-03-01'
date'2024-02-29' = '2024-02-29'
timestamp'2024-01-01 00:00:00' = date'2024-01-01'
1 between 0 and 2
5 between 6 and 2
null between 1 and 2
2 in (1, 2, 3)
4 in (1, 2, 3)
4 in (1, null)
null in (1, 2)
1 in (1, null)
'b' in ('a', 'b')
1 not in (2, 3)
1 not in (2, null)
true and null
false and null
true or null
false or null
not null
not true
isnull(null)
isnotnull(1)
null is null
1 is not null
true is true
null is false
null is not true
greatest(1, 2, 3)
greatest(1, null, 3)
greatest(1, 2.5)
least('b', 'a', 'c')
least(null, null)
greatest(date'2024-01-01', date'2023-01-01')
