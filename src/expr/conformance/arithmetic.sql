-- Arithmetic operators: result types, overflow (non-ANSI wraps), division, decimals.
1 + 1
1 + 2L
1Y + 1Y
127Y + 1Y
32767S + 1S
2147483647 + 1
9223372036854775807L + 1L
-2147483648 - 1
5 - 7
3 * 4
2147483647 * 2
1.5 + 1
1.5D + 1
1.5F + 1
7 / 2
7 / 0
0 / 0
-7 / 2
7.0 / 2
7 div 2
-7 div 2
7 div 0
7 % 3
-7 % 3
7 % -3
7 % 0
7.5 % 2
-0.0D
0.0D * -1
1e308 * 10
cast(1 as double) / 0
-cast(1 as double) / 0
cast(0 as double) / 0
-(5)
-(-2147483648)
- 2147483648
1.10 + 2.205
1.5 * 1.5
cast(1.5 as decimal(10,2)) * 3
cast(1 as decimal(38,0)) + 1
cast(99999999999999999999999999999999999999 as decimal(38,0)) + 1
cast(1 as decimal(10,2)) / 3
cast(10 as decimal(5,1)) / cast(4 as decimal(3,2))
123456789.123456789 * 987654321.987654321
0.1 + 0.2
0.1D + 0.2D
abs(-5)
abs(-2147483648)
abs(-1.5)
abs(-0.0D)
negative(3)
mod(7, 3)
mod(-7, 3)
mod(7.5, 2)
pow(2, 10)
power(2, -1)
pow(-8, 1.0/3)
sqrt(16)
sqrt(-1)
sqrt(2)
1 + null
null * 2
null / 0
-- A minus before a literal belongs to it: boundary values are in range.
-128Y
-129Y
-32768S
-2147483648
-2147483649
-9223372036854775808L
-9223372036854775808
-9223372036854775809
-1.5
-0.0D
-1e3
- 5 * 2
-(1)
2 - -1
-5 % 3
-abs(-3)
-128Y - 1Y
-- Integral literals in decimal arithmetic take the narrowest decimal that holds them.
cast(1.5 as decimal(4,2)) + 100
cast(1.5 as decimal(4,2)) * 1000000000000
cast(1.5 as decimal(4,2)) - -7
cast(1.5 as decimal(4,2)) / 0
cast(1.5 as decimal(4,2)) % 7
cast(1.5 as decimal(4,2)) * cast(3 as int)
cast(1.5 as decimal(4,2)) + 1L
-- Unary plus is type-checked as Spark's: numbers and intervals only.
+5
+1.5
+date'2024-01-01'
+'1'
+array(1)
+true
+null
+(-5)
positive(5)
negative(5)
negative(-5)
- -5
+x'01'
+cast(1.5 as decimal(4,2))
-- Coercion that differs by mode: a float beside an integral type, strings beside numbers.
1.5F + 1L
1.5F * 2S
1Y - 0.5F
'1' + 1
'1.5' + 1
'1' + 1.5
'1' * 2L
'1' + '2'
'a' + 1
-'1'
-- Division and remainder by zero of every numeric kind; overflow of each integral width.
1 / 0.0
1.0 / 0
1 div 0.0
5 % 0.0
5.5D % 0
-9223372036854775808L div -1
-(-128Y)
-(-32768S)
-(-9223372036854775808L)
-- The TRY forms: NULL where ANSI fails, in either mode.
try_add(2147483647, 1)
try_add(1, 2)
try_add(1, 'a')
try_add('1', 1)
try_add(cast('x' as int), 1)
try_add(date'2024-01-01', 1)
try_add(timestamp'2024-01-01 00:00:00', interval 1 day)
try_subtract(-2147483648, 1)
try_subtract(5L, 7)
try_multiply(2147483647, 2)
try_multiply(3, 4.5)
try_divide(1, 0)
try_divide(1, 2)
try_divide(1.5, 0)
try_divide(7L, 2)
try_divide(1, 0.0)
try_divide(1.0D, 0)
try_divide(cast('x' as int), 1)
try_mod(7, 0)
try_mod(7, 3)
try_mod(-7.5, 2)
