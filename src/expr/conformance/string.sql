-- String functions.
upper('abc')
lower('ÀBC')
upper('straße')
ucase('x')
lcase('X')
length('abc')
length('')
length('日本語')
char_length('ab')
length(null)
trim('  ab  ')
ltrim('  ab  ')
rtrim('  ab  ')
trim('\tab\t')
substring('hello', 2)
substring('hello', 2, 3)
substring('hello', 0, 2)
substring('hello', -3, 2)
substring('hello', -10, 3)
substring('hello', 10)
substring('hello', 2, -1)
substr('hello', 1, 1)
substring('日本語', 2, 1)
concat('a', 'b', 'c')
concat('a', null)
concat()
concat('a', 1)
concat_ws('-', 'a', 'b')
concat_ws('-', 'a', null, 'b')
concat_ws(null, 'a')
concat_ws(',')
replace('aaa', 'a', 'b')
replace('abc', 'b')
replace('abc', '', 'x')
split('a,b,c', ',')
split('a.b', '.')
split('a1b22c', '[0-9]+')
split('', ',')
regexp_extract('abc123', '([a-z]+)([0-9]+)', 2)
regexp_extract('abc', '([0-9]+)', 1)
regexp_extract('abc123', '[a-z]+', 0)
startswith('abc', 'ab')
startswith('abc', '')
startswith(null, 'a')
endswith('abc', 'bc')
contains('abc', 'b')
contains('abc', '')
'abc' like 'a%'
'abc' like 'a_c'
'a%c' like 'a\%c'
'abc' like 'A%'
'abc' ilike 'A%'
'ab' like '%'
null like 'a'
'abc' rlike '^a.c$'
'abc' rlike 'b'
'aaa' rlike 'a{2}'
'x' || 'y'
'a' || null
'ab' < 'abc'
'\110ello'
'tab\there'
'quote''s'
'\u0041'
'a\\b'
'\101\102'
'\377'
'\0'
'\400'
'\18'
'\u00e9'
-- String predicates take binary arguments too.
contains(x'616263', x'62')
startswith(x'616263', x'61')
endswith(x'616263', x'63')
contains(x'616263', x'7a')
